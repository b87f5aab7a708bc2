import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

/** PATCH /messages/{id} and GET /messages/{id}/history as a client sees them (Zulip 9.0). */

let m: Messaging;
let org: Org;
let general: number;
let botId: number;

const edit = (who: Org["member"], id: number, params: Record<string, unknown>) => m.call("PATCH", `/messages/${id}`, who, params);
const getOne = async (who: Org["member"], id: number) => (await m.ok(await m.call("GET", `/messages/${id}`, who))).message;
const topicIds = async (who: Org["member"], stream: string, topic: string) =>
  (await m.ok(await m.call("GET", "/messages", who, { anchor: "newest", num_before: 50, narrow: JSON.stringify([["channel", stream], ["topic", topic]]) }))).messages;
const editEvents = async () => (await m.clientEvents()).filter((e) => e.type === "messaging.message.updated");
const mention = (u: Org["member"]) => `@_**${u.full_name}|${u.user_id}**`;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member, org.member2, org.guest]);
  const { rows } = await m.accountsPool.query("SELECT notification_bot_id FROM realms WHERE id = $1", [org.realmId]);
  botId = Number(rows[0].notification_bot_id);
});
afterAll(async () => m?.close());
// The clock only moves forward (time limits are tested by advancing it): accounts' realm
// settings are cached by the time they were read.
beforeEach(async () => {
  await m.outbox();
});

describe("content edits", () => {
  it("answers an empty success and sends update_message with the old and new content to the readers, with their new flags", async () => {
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "edits", content: "hello" });
    await m.outbox();
    m.clock.advance(5_000);
    const res = await edit(org.member, id, { content: "hello @**Max Member**" });
    expect(res.body).toEqual({ result: "success", msg: "" });
    const [ev] = await editEvents();
    const at = Math.floor(m.clock.now().getTime() / 1000);
    expect(ev.event).toEqual({
      type: "update_message",
      user_id: org.member.user_id,
      edit_timestamp: at,
      message_id: id,
      message_ids: [id],
      rendering_only: false,
      stream_name: "general",
      stream_id: general,
      orig_content: "hello",
      orig_rendered_content: "<p>hello</p>",
      content: "hello @**Max Member**",
      rendered_content: `<p>hello <span class="user-mention" data-user-id="${org.member2.user_id}">@Max Member</span></p>`,
      prev_rendered_content_version: 1,
      is_me_message: false,
    });
    const flagsOf = new Map(ev.users.map((u: any) => [u.id, u.flags]));
    expect(flagsOf.get(org.member2.user_id)).toEqual(["mentioned"]);
    expect(flagsOf.get(org.owner.user_id)).toEqual([]);
    expect([...flagsOf.keys()].sort((a, b) => a - b)).toEqual([org.owner, org.member, org.member2, org.guest].map((u) => u.user_id).sort((a, b) => a - b));

    const seen = await getOne(org.member2, id);
    expect(seen.flags).toEqual(["mentioned"]);
    expect(seen.last_edit_timestamp).toBe(at);
    expect(seen.edit_history).toEqual([
      { user_id: org.member.user_id, timestamp: at, prev_content: "hello", prev_rendered_content: "<p>hello</p>", prev_rendered_content_version: 1 },
    ]);
  });

  it("an edit that drops the mention clears the flag; emptying the content leaves (deleted)", async () => {
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "edits", content: "hi @**Max Member**" });
    await m.ok(await edit(org.member, id, { content: "  " }));
    const [ev] = await editEvents();
    expect(ev.event.content).toBe("(deleted)");
    expect(ev.users.find((u: any) => u.id === org.member2.user_id).flags).toEqual([]);
    expect((await getOne(org.member2, id)).flags).toEqual([]);
  });

  it("GET /messages/{id}/history: the original first, then each edit with the content, topic and diff after it", async () => {
    const sentAt = m.clock.now();
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "history", content: "Hello!" });
    m.clock.advance(10_000);
    await m.ok(await edit(org.member, id, { content: "Howdy!", topic: "history 2" }));
    const res = await m.ok(await m.call("GET", `/messages/${id}/history`, org.member2));
    const sec = (d: Date) => Math.floor(d.getTime() / 1000);
    expect(res.message_history).toEqual([
      { content: "Hello!", rendered_content: "<p>Hello!</p>", timestamp: sec(sentAt), topic: "history", user_id: org.member.user_id },
      {
        content: "Howdy!",
        rendered_content: "<p>Howdy!</p>",
        timestamp: sec(m.clock.now()),
        topic: "history 2",
        user_id: org.member.user_id,
        prev_topic: "history",
        prev_content: "Hello!",
        prev_rendered_content: "<p>Hello!</p>",
        content_html_diff:
          '<div><p><span class="highlight_text_inserted">Howdy!</span></p> <p><span class="highlight_text_deleted">Hello!</span></p></div>',
      },
    ]);
    const never = await m.send(org.member, { type: "stream", to: "general", topic: "history", content: "as sent" });
    expect((await m.ok(await m.call("GET", `/messages/${never}/history`, org.owner))).message_history).toHaveLength(1);
    expectError(await m.call("GET", "/messages/999999/history", org.owner), 400, "BAD_REQUEST", "Invalid message(s)");
  });

  it("refusals, in Zulip's words", async () => {
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "refusals", content: "mine" });
    const dm = await m.send(org.member, { type: "direct", to: JSON.stringify([org.member2.user_id]), content: "psst" });
    await m.outbox();
    expectError(await edit(org.member2, id, { content: "theirs" }), 400, "BAD_REQUEST", "You don't have permission to edit this message");
    expectError(await edit(org.member, id, {}), 400, "BAD_REQUEST", "Nothing to change");
    expectError(await edit(org.member, id, { topic: "refusals" }), 400, "BAD_REQUEST", "Nothing to change");
    expectError(await edit(org.member, id, { content: "x", propagate_mode: "change_all" }), 400, "BAD_REQUEST", "Invalid propagate_mode without topic edit");
    expectError(await edit(org.member, id, { propagate_mode: "change_some", topic: "x" }), 400, "BAD_REQUEST", "Invalid propagate_mode");
    expectError(await edit(org.member, id, { topic: "   " }), 400, "BAD_REQUEST", "Topic can't be empty!");
    expectError(await edit(org.admin, id, { content: "x", stream_id: general + 1000 }), 400, "BAD_REQUEST", "You don't have permission to edit this message");
    expectError(await edit(org.member, id, { content: "x", stream_id: general + 1000 }), 400, "BAD_REQUEST", "Cannot change message content while changing channel");
    expectError(await edit(org.member, dm, { topic: "x" }), 400, "BAD_REQUEST", "Direct messages cannot have topics.");
    expectError(await edit(org.member, dm, { stream_id: general }), 400, "BAD_REQUEST", "Direct messages cannot be moved to channels.");
    expectError(await edit(org.owner, dm, { content: "x" }), 400, "BAD_REQUEST", "Invalid message(s)");
    expectError(await edit(org.member, 999999, { content: "x" }), 400, "BAD_REQUEST", "Invalid message(s)");
    expect(await m.clientEvents()).toEqual([]);
  });

  it("a widget's content cannot be edited, not even by its sender; its topic can", async () => {
    const poll = await m.send(org.member, { type: "stream", to: "general", topic: "widgets", content: "/poll Lunch?\nPizza" });
    await m.outbox();
    expectError(await edit(org.member2, poll, { content: "/poll Dinner?" }), 400, "BAD_REQUEST", "You don't have permission to edit this message");
    expectError(await edit(org.member, poll, { content: "/poll Dinner?" }), 400, "BAD_REQUEST", "Widgets cannot be edited.");
    expect(await m.clientEvents()).toEqual([]);
    expect((await getOne(org.member, poll)).content).toContain("Lunch?");
    await m.ok(await edit(org.member, poll, { topic: "widgets 2", send_notification_to_new_thread: false }));
    // A plain message may become one (Zulip makes no widget of an edit).
    const plain = await m.send(org.member, { type: "stream", to: "general", topic: "widgets", content: "hi" });
    await m.ok(await edit(org.member, plain, { content: "/poll Now?" }));
  });

  it("the organization's switch and time limit for content edits", async () => {
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "limits", content: "old" });
    m.clock.advance(619_000);
    await m.ok(await edit(org.member, id, { content: "still in time (600 s and a 20 s buffer)" }));
    m.clock.advance(2_000);
    expectError(await edit(org.member, id, { content: "late" }), 400, "BAD_REQUEST", "The time limit for editing this message has passed");
    await m.setRealmSetting(org.realmId, "message_content_edit_limit_seconds", null);
    await m.ok(await edit(org.member, id, { content: "no limit" }));
    await m.setRealmSetting(org.realmId, "allow_message_editing", false);
    try {
      expectError(await edit(org.member, id, { content: "off" }), 400, "BAD_REQUEST", "Your organization has turned off message editing");
    } finally {
      await m.setRealmSetting(org.realmId, "allow_message_editing", true);
      await m.setRealmSetting(org.realmId, "message_content_edit_limit_seconds", 600);
    }
  });

  it("a direct message's edit goes to its participants, without channel fields", async () => {
    const dm = await m.send(org.member, { type: "direct", to: JSON.stringify([org.member2.user_id]), content: "psst" });
    await m.ok(await edit(org.member, dm, { content: "psst!" }));
    const [ev] = await editEvents();
    expect(ev.event).not.toHaveProperty("stream_id");
    expect(ev.event).not.toHaveProperty("propagate_mode");
    expect(ev.users.map((u: any) => u.id).sort((a: number, b: number) => a - b)).toEqual([org.member.user_id, org.member2.user_id].sort((a, b) => a - b));
  });
});

describe("topic edits", () => {
  it("change_all moves the whole topic: one event with every id, topic-only history on the others, and the new topic's notice", async () => {
    const a = await m.send(org.owner, { type: "stream", to: "general", topic: "lunch", content: "pizza?" });
    const b = await m.send(org.member, { type: "stream", to: "general", topic: "lunch", content: "yes" });
    const elsewhere = await m.send(org.member, { type: "stream", to: "general", topic: "dinner", content: "later" });
    await m.outbox();
    await m.ok(await edit(org.member, b, { topic: "food", propagate_mode: "change_all" }));
    const events = await m.clientEvents();
    const update = events.find((e) => e.type === "messaging.message.updated")!;
    expect(update.event).toEqual({
      type: "update_message",
      user_id: org.member.user_id,
      edit_timestamp: Math.floor(m.clock.now().getTime() / 1000),
      message_id: b,
      message_ids: [a, b],
      rendering_only: false,
      stream_name: "general",
      stream_id: general,
      propagate_mode: "change_all",
      orig_subject: "lunch",
      subject: "food",
      topic_links: [],
    });
    expect((await topicIds(org.owner, "general", "food")).map((x: any) => x.id)).toEqual([a, b, expect.any(Number)]);
    expect(await topicIds(org.owner, "general", "lunch")).toEqual([]);
    expect((await getOne(org.owner, elsewhere)).subject).toBe("dinner");
    const other = await getOne(org.owner, a);
    expect(other.edit_history).toEqual([{ user_id: org.member.user_id, timestamp: expect.any(Number), prev_topic: "lunch", topic: "food" }]);
    // The notice in the new topic, from the notification bot, after the update event.
    const notice = events.find((e) => e.type === "messaging.message.sent")!;
    expect(events.indexOf(notice)).toBeGreaterThan(events.indexOf(update));
    expect(notice.event.message).toMatchObject({ sender_id: botId, subject: "food", stream_id: general });
    expect(notice.event.markdown_content).toBe(`This topic was moved here from #**general>lunch** by ${mention(org.member)}.`);
  });

  it("unread messages stay unread in their new topic (register's unread_msgs)", async () => {
    const id = await m.send(org.owner, { type: "stream", to: "general", topic: "unread here", content: "news" });
    await m.ok(await edit(org.owner, id, { topic: "unread there", send_notification_to_new_thread: false }));
    const state = await m.ok(await m.call("POST", "/internal/register_state/messaging", org.member2, { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) }));
    const buckets = state.unread_msgs.streams.filter((s: any) => s.unread_message_ids.includes(id));
    expect(buckets.map((s: any) => [s.stream_id, s.topic])).toEqual([[general, "unread there"]]);
  });

  it("two topic-wide moves of one topic at once both go through, one after the other", async () => {
    const a = await m.send(org.member, { type: "stream", to: "general", topic: "race", content: "1" });
    const b = await m.send(org.member, { type: "stream", to: "general", topic: "race", content: "2" });
    const quiet = { propagate_mode: "change_all", send_notification_to_new_thread: false };
    const results = await Promise.all([edit(org.member, a, { topic: "race A", ...quiet }), edit(org.member, b, { topic: "race B", ...quiet })]);
    for (const r of results) await m.ok(r);
    const topics = [(await getOne(org.member, a)).subject, (await getOne(org.member, b)).subject];
    expect(topics[0]).toBe(topics[1]);
  });

  it("change_later moves this and later messages; notices in both topics count them", async () => {
    const a = await m.send(org.member, { type: "stream", to: "general", topic: "split", content: "1" });
    const b = await m.send(org.member, { type: "stream", to: "general", topic: "split", content: "2" });
    const c = await m.send(org.member, { type: "stream", to: "general", topic: "split", content: "3" });
    await m.outbox();
    await m.ok(await edit(org.member, b, { topic: "split 2", propagate_mode: "change_later", send_notification_to_old_thread: true }));
    const events = await m.clientEvents();
    expect(events.find((e) => e.type === "messaging.message.updated")!.event.message_ids).toEqual([b, c]);
    const notices = events.filter((e) => e.type === "messaging.message.sent").map((e) => [e.event.message.subject, e.event.markdown_content]);
    expect(notices).toEqual([
      ["split 2", `2 messages were moved here from #**general>split** by ${mention(org.member)}.`],
      ["split", `2 messages were moved from this topic to #**general>split 2** by ${mention(org.member)}.`],
    ]);
    expect((await topicIds(org.owner, "general", "split")).map((x: any) => x.id)).toEqual([a, expect.any(Number)]);
  });

  it("change_one of a topic's only message: both notices say the topic moved", async () => {
    const only = await m.send(org.member, { type: "stream", to: "general", topic: "solo", content: "alone" });
    await m.outbox();
    await m.ok(await edit(org.member, only, { topic: "solo moved", send_notification_to_old_thread: true }));
    const notices = (await m.clientEvents()).filter((e) => e.type === "messaging.message.sent").map((e) => [e.event.message.subject, e.event.markdown_content]);
    expect(notices).toEqual([
      ["solo moved", `This topic was moved here from #**general>solo** by ${mention(org.member)}.`],
      ["solo", `This topic was moved to #**general>solo moved** by ${mention(org.member)}.`],
    ]);
  });

  it("change_one into a topic that has messages: the new topic links the message", async () => {
    const moved = await m.send(org.member, { type: "stream", to: "general", topic: "from", content: "x" });
    await m.send(org.member, { type: "stream", to: "general", topic: "from", content: "stays" });
    await m.send(org.member, { type: "stream", to: "general", topic: "into", content: "was here" });
    await m.outbox();
    await m.ok(await edit(org.member, moved, { topic: "into" }));
    const notice = (await m.clientEvents()).find((e) => e.type === "messaging.message.sent")!;
    const link = `${m.deps.config.EXTERNAL_URL}/#narrow/channel/${general}-general/topic/into/near/${moved}`;
    expect(notice.event.markdown_content).toBe(`[A message](${link}) was moved here from #**general>from** by ${mention(org.member)}.`);
  });

  it("resolving a topic: the notice says so (unread only for those who wrote in it), no other notice, and policies follow", async () => {
    const a = await m.send(org.member, { type: "stream", to: "general", topic: "bug", content: "broken" });
    await m.send(org.member2, { type: "stream", to: "general", topic: "bug", content: "fixed" });
    await m.ok(await m.call("POST", "/user_topics", org.owner, { stream_id: general, topic: "bug", visibility_policy: 3 }));
    await m.outbox();
    await m.ok(await edit(org.owner, a, { topic: "✔ bug", propagate_mode: "change_all", send_notification_to_old_thread: false }));
    const events = await m.clientEvents();
    const sent = events.filter((e) => e.type === "messaging.message.sent");
    expect(sent).toHaveLength(1);
    expect(sent[0].event.markdown_content).toBe(`${mention(org.owner)} has marked this topic as resolved.`);
    const flagsOf = new Map(sent[0].users.map((u: any) => [u.id, u.flags]));
    expect(flagsOf.get(org.member.user_id)).toEqual([]);
    expect(flagsOf.get(org.member2.user_id)).toEqual([]);
    expect(flagsOf.get(org.owner.user_id)).toEqual(["read"]);
    // The owner followed the topic, and so did its starter (the default: follow topics one starts).
    const policies = events.filter((e) => e.type === "messaging.user_topic.updated").map((e) => [e.users, e.event.topic_name, e.event.visibility_policy]);
    const [first, second] = [org.owner, org.member].map((u) => u.user_id).sort((x, y) => x - y);
    expect(policies).toEqual([[[first], "bug", 0], [[first], "✔ bug", 3], [[second], "bug", 0], [[second], "✔ bug", 3]]);
    await m.ok(await edit(org.owner, a, { topic: "bug", propagate_mode: "change_all" }));
    const again = (await m.clientEvents()).filter((e) => e.type === "messaging.message.sent");
    expect(again.map((e) => e.event.markdown_content)).toEqual([`${mention(org.owner)} has marked this topic as unresolved.`]);
  });

  it("who may edit topics (edit_topic_policy), and until when", async () => {
    const id = await m.send(org.owner, { type: "stream", to: "general", topic: "policy", content: "x" });
    await m.ok(await edit(org.guest, id, { topic: "policy 2", send_notification_to_new_thread: false }));
    await m.setRealmSetting(org.realmId, "edit_topic_policy", 2);
    try {
      expectError(await edit(org.member, id, { topic: "policy 3" }), 400, "BAD_REQUEST", "You don't have permission to edit this message");
      await m.ok(await edit(org.admin, id, { topic: "policy 3", send_notification_to_new_thread: false }));
    } finally {
      await m.setRealmSetting(org.realmId, "edit_topic_policy", 5);
    }
    m.clock.advance((604_800 + 21) * 1000);
    expectError(await edit(org.member, id, { topic: "late" }), 400, "BAD_REQUEST", "The time limit for editing this message's topic has passed.");
    await m.ok(await edit(org.moderator, id, { topic: "moderated", send_notification_to_new_thread: false }));
  });

  it("change_all past the time limit says how much of the topic the user may move", async () => {
    const old = await m.send(org.member, { type: "stream", to: "general", topic: "long", content: "old" });
    m.clock.advance(8 * 86_400_000);
    const recent = await m.send(org.member, { type: "stream", to: "general", topic: "long", content: "new" });
    const res = await edit(org.member, recent, { topic: "longer", propagate_mode: "change_all" });
    expectError(res, 400, "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", "You only have permission to move the 1/2 most recent messages in this topic.");
    expect(res.body).toMatchObject({ first_message_id_allowed_to_move: recent, total_messages_in_topic: 2, total_messages_allowed_to_move: 1 });
    await m.ok(await edit(org.moderator, recent, { topic: "longer", propagate_mode: "change_all", send_notification_to_new_thread: false }));
    expect((await getOne(org.member, old)).subject).toBe("longer");
  });
});

describe("moves to another channel", () => {
  it("readers who cannot see the new channel get delete_message instead, and lose their rows; the others get update_message", async () => {
    const priv = await m.createStream(org.owner, "private", [org.owner, org.member], { invite_only: true });
    const a = await m.send(org.member, { type: "stream", to: "general", topic: "secret plan", content: "one" });
    const b = await m.send(org.member, { type: "stream", to: "general", topic: "secret plan", content: "two" });
    await m.outbox();
    expectError(await edit(org.member, a, { stream_id: priv, propagate_mode: "change_all" }), 400, "BAD_REQUEST", "You don't have permission to move this message");
    expectError(await edit(org.admin, a, { stream_id: priv }), 400, "BAD_REQUEST", "Invalid channel ID");
    await m.ok(await edit(org.owner, a, { stream_id: priv, propagate_mode: "change_all", send_notification_to_old_thread: true }));
    const events = await m.clientEvents();
    const gone = events.find((e) => e.type === "messaging.messages.moved_away")!;
    expect(gone.event).toEqual({ type: "delete_message", message_type: "stream", message_ids: [a, b], stream_id: general, topic: "secret plan" });
    expect(gone.users.sort()).toEqual([org.member2.user_id, org.guest.user_id].sort());
    const update = events.find((e) => e.type === "messaging.message.updated")!;
    expect(events.indexOf(gone)).toBeLessThan(events.indexOf(update));
    expect(update.event).toMatchObject({ message_ids: [a, b], stream_id: general, new_stream_id: priv, orig_subject: "secret plan", propagate_mode: "change_all" });
    expect(update.event).not.toHaveProperty("subject");
    expect(update.users.map((u: any) => u.id).sort()).toEqual([org.owner.user_id, org.member.user_id].sort());
    expectError(await m.call("GET", `/messages/${a}`, org.member2), 400, "BAD_REQUEST", "Invalid message(s)");
    expect((await getOne(org.member, a)).stream_id).toBe(priv);
    expect((await getOne(org.member, b)).edit_history[0]).toEqual({ user_id: org.owner.user_id, timestamp: expect.any(Number), prev_stream: general, stream: priv });
    const notices = events.filter((e) => e.type === "messaging.message.sent").map((e) => [e.event.message.stream_id, e.event.markdown_content]);
    expect(notices).toEqual([
      [priv, `This topic was moved here from #**general>secret plan** by ${mention(org.owner)}.`],
      [general, `This topic was moved to #**private>secret plan** by ${mention(org.owner)}.`],
    ]);
  });

  it("into a channel without shared history, its other subscribers get the messages as read", async () => {
    const vault = await m.createStream(org.owner, "vault", [org.owner, org.admin], { invite_only: true, history_public_to_subscribers: false });
    const id = await m.send(org.owner, { type: "stream", to: "general", topic: "archive", content: "keep" });
    await m.ok(await edit(org.owner, id, { stream_id: vault, send_notification_to_new_thread: false }));
    expect((await getOne(org.admin, id)).flags).toEqual(["read"]);
  });

  it("first_message_id follows the move in both channels, each with a stream update event", async () => {
    const from = await m.createStream(org.owner, "move source", [org.owner, org.member]);
    const to = await m.createStream(org.owner, "move target", [org.owner, org.member]);
    const first = await m.send(org.owner, { type: "stream", to: "move source", topic: "old", content: "first" });
    const later = await m.send(org.owner, { type: "stream", to: "move source", topic: "stays", content: "second" });
    const target = await m.send(org.owner, { type: "stream", to: "move target", topic: "t", content: "target's own" });
    await m.outbox();
    await m.ok(await edit(org.owner, first, { stream_id: to, send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
    const firstIds = async (id: number) => (await m.ok(await m.call("GET", `/streams/${id}`, org.member))).stream.first_message_id;
    expect(await firstIds(from)).toBe(later);
    expect(await firstIds(to)).toBe(first);
    const updates = (await m.clientEvents()).filter((e) => e.event.type === "stream").map((e) => e.event);
    expect(updates).toEqual([
      { type: "stream", op: "update", stream_id: from, name: "move source", property: "first_message_id", value: later },
      { type: "stream", op: "update", stream_id: to, name: "move target", property: "first_message_id", value: first },
    ]);
    // Moving a later message in changes neither channel's oldest: no stream event.
    await m.ok(await edit(org.owner, later, { stream_id: to, send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
    expect(await firstIds(from)).toBeNull();
    expect(await firstIds(to)).toBe(first);
    expect((await m.clientEvents()).filter((e) => e.event.type === "stream").map((e) => [e.event.stream_id, e.event.value])).toEqual([[from, null]]);
    expect(target).toBeGreaterThan(first);
  });

  it("an archived channel is no destination, not even for an owner", async () => {
    const archived = await m.createStream(org.owner, "archived soon", [org.owner, org.member]);
    await m.ok(await m.call("DELETE", `/streams/${archived}`, org.owner));
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "to the archive", content: "x" });
    await m.outbox();
    expectError(await edit(org.owner, id, { stream_id: archived }), 400, "BAD_REQUEST", "Invalid channel ID");
    expect(await m.clientEvents()).toEqual([]);
    expect((await getOne(org.member, id)).stream_id).toBe(general);
  });

  it("moving into a channel one may not post in is refused", async () => {
    const announce = await m.createStream(org.owner, "announce", [org.owner, org.moderator], { stream_post_policy: 2 });
    const id = await m.send(org.moderator, { type: "stream", to: "general", topic: "news", content: "x" });
    await m.setRealmSetting(org.realmId, "move_messages_between_streams_policy", 4);
    try {
      expectError(await edit(org.moderator, id, { stream_id: announce }), 400, "BAD_REQUEST", "Only organization administrators can send to this channel.");
    } finally {
      await m.setRealmSetting(org.realmId, "move_messages_between_streams_policy", 2);
    }
  });
});
