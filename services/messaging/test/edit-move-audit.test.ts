import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

/**
 * Message edits and moves checked against Zulip 9.0 (feature level 267) where
 * message-edit.test.ts leaves gaps: the notification bot's notices around resolving a topic,
 * the channel move's time limits, flags and edit history after a move, topic visibility
 * policies on a whole-topic move, and the full update_message event of a combined edit.
 */

let m: Messaging;
let org: Org;
let general: number;

const edit = (who: Org["member"], id: number, params: Record<string, unknown>) => m.call("PATCH", `/messages/${id}`, who, params);
const getOne = async (who: Org["member"], id: number) => (await m.ok(await m.call("GET", `/messages/${id}`, who))).message;
const mention = (u: Org["member"]) => `@_**${u.full_name}|${u.user_id}**`;
const sec = (d: Date) => Math.floor(d.getTime() / 1000);
/** The notification bot's messages among the events since the last read: [topic, Markdown]. */
const noticesOf = (events: Array<{ type: string; event: any }>) =>
  events.filter((e) => e.type === "messaging.message.sent").map((e) => [e.event.message.subject, e.event.markdown_content]);
const byId = (a: number, b: number) => a - b;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest]);
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

describe("resolving a topic", () => {
  it("the resolved notice is unread for those who wrote in the topic or reacted to its messages, read for the others", async () => {
    const a = await m.send(org.member, { type: "stream", to: "general", topic: "reacted", content: "broken" });
    await m.ok(await m.call("POST", `/messages/${a}/reactions`, org.member2, { emoji_name: "thumbs_up" }));
    await m.outbox();
    await m.ok(await edit(org.owner, a, { topic: "✔ reacted", propagate_mode: "change_all" }));
    const [notice] = (await m.clientEvents()).filter((e) => e.type === "messaging.message.sent");
    expect(notice.event.markdown_content).toBe(`${mention(org.owner)} has marked this topic as resolved.`);
    const flagsOf = new Map(notice.users.map((u: any) => [u.id, u.flags]));
    expect(flagsOf.get(org.member.user_id)).toEqual([]);
    expect(flagsOf.get(org.member2.user_id)).toEqual([]);
    expect(flagsOf.get(org.admin.user_id)).toEqual(["read"]);
    expect((await getOne(org.member2, notice.event.message.id)).flags).toEqual([]);
  });

  it("resolving and renaming at once: the resolved notice, then the moved-here notice", async () => {
    const a = await m.send(org.member, { type: "stream", to: "general", topic: "crash", content: "it crashes" });
    await m.outbox();
    await m.ok(await edit(org.member, a, { topic: "✔ crash on start", propagate_mode: "change_all" }));
    expect(noticesOf(await m.clientEvents())).toEqual([
      ["✔ crash on start", `${mention(org.member)} has marked this topic as resolved.`],
      ["✔ crash on start", `This topic was moved here from #**general>crash** by ${mention(org.member)}.`],
    ]);
    // Unresolving with a new name likewise.
    await m.ok(await edit(org.member, a, { topic: "crash again", propagate_mode: "change_all" }));
    expect(noticesOf(await m.clientEvents())).toEqual([
      ["crash again", `${mention(org.member)} has marked this topic as unresolved.`],
      ["crash again", `This topic was moved here from #**general>✔ crash on start** by ${mention(org.member)}.`],
    ]);
  });

  it("a content edit that also toggles the prefix sends no notice at all", async () => {
    const a = await m.send(org.member, { type: "stream", to: "general", topic: "typo", content: "teh fix" });
    await m.outbox();
    await m.ok(await edit(org.member, a, { topic: "✔ typo", content: "the fix", propagate_mode: "change_all" }));
    const events = await m.clientEvents();
    expect(noticesOf(events)).toEqual([]);
    expect(events.find((e) => e.type === "messaging.message.updated")!.event).toMatchObject({ subject: "✔ typo", content: "the fix" });
  });

  it("moving a topic to another channel while resolving it: no resolved notice, the moved notices as asked", async () => {
    const other = await m.createStream(org.owner, "resolved elsewhere", [org.owner, org.member, org.member2]);
    const a = await m.send(org.member, { type: "stream", to: "general", topic: "moving fix", content: "x" });
    await m.outbox();
    await m.ok(await edit(org.owner, a, { topic: "✔ moving fix", stream_id: other, propagate_mode: "change_all", send_notification_to_old_thread: true }));
    expect(noticesOf(await m.clientEvents())).toEqual([
      ["✔ moving fix", `This topic was moved here from #**general>moving fix** by ${mention(org.owner)}.`],
      ["moving fix", `This topic was moved to #**resolved elsewhere>✔ moving fix** by ${mention(org.owner)}.`],
    ]);
  });
});

describe("time limits of a move between channels", () => {
  it("move_messages_between_streams_limit_seconds holds members back, in Zulip's words; moderators pass", async () => {
    const to = await m.createStream(org.owner, "late target", [org.owner, org.moderator, org.member]);
    await m.setRealmSetting(org.realmId, "move_messages_between_streams_policy", 1);
    await m.setRealmSetting(org.realmId, "move_messages_between_streams_limit_seconds", 3600);
    try {
      const id = await m.send(org.member, { type: "stream", to: "general", topic: "late move", content: "x" });
      m.clock.advance((3600 + 19) * 1000);
      const quiet = { send_notification_to_new_thread: false };
      const second = await m.send(org.member, { type: "stream", to: "general", topic: "late move", content: "y" });
      m.clock.advance(2_000);
      await m.outbox();
      expectError(await edit(org.member, id, { stream_id: to, ...quiet }), 400, "BAD_REQUEST", "The time limit for editing this message's channel has passed");
      // A whole topic across channels: the newer message may move, the older may not.
      const res = await edit(org.member, second, { stream_id: to, propagate_mode: "change_all", ...quiet });
      expectError(res, 400, "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", "You only have permission to move the 1/2 most recent messages in this topic.");
      expect(res.body).toMatchObject({ first_message_id_allowed_to_move: second, total_messages_in_topic: 2, total_messages_allowed_to_move: 1 });
      expect(await m.clientEvents()).toEqual([]);
      await m.ok(await edit(org.moderator, id, { stream_id: to, propagate_mode: "change_all", ...quiet }));
      expect((await getOne(org.member, id)).stream_id).toBe(to);
      expect((await getOne(org.member, second)).stream_id).toBe(to);
    } finally {
      await m.setRealmSetting(org.realmId, "move_messages_between_streams_limit_seconds", 604800);
      await m.setRealmSetting(org.realmId, "move_messages_between_streams_policy", 2);
    }
  });

  it("a topic and channel change at once is held to the stricter of the two limits", async () => {
    const to = await m.createStream(org.owner, "strict target", [org.owner, org.member]);
    await m.setRealmSetting(org.realmId, "move_messages_between_streams_policy", 1);
    await m.setRealmSetting(org.realmId, "move_messages_between_streams_limit_seconds", 86_400);
    await m.setRealmSetting(org.realmId, "move_messages_within_stream_limit_seconds", 3600);
    try {
      const old = await m.send(org.member, { type: "stream", to: "general", topic: "strict", content: "old" });
      m.clock.advance(2 * 3600 * 1000);
      const recent = await m.send(org.member, { type: "stream", to: "general", topic: "strict", content: "new" });
      const quiet = { send_notification_to_new_thread: false };
      // The channel alone (a day) would let both move; with the topic (an hour) only the newer.
      const res = await edit(org.member, recent, { stream_id: to, topic: "stricter", propagate_mode: "change_all", ...quiet });
      expectError(res, 400, "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", "You only have permission to move the 1/2 most recent messages in this topic.");
      await m.ok(await edit(org.member, recent, { stream_id: to, propagate_mode: "change_all", ...quiet }));
      expect((await getOne(org.member, old)).stream_id).toBe(to);
    } finally {
      await m.setRealmSetting(org.realmId, "move_messages_within_stream_limit_seconds", 604800);
      await m.setRealmSetting(org.realmId, "move_messages_between_streams_limit_seconds", 604800);
      await m.setRealmSetting(org.realmId, "move_messages_between_streams_policy", 2);
    }
  });
});

describe("what moves with the messages", () => {
  it("unread, mentioned and starred flags stay, within a channel and to another one; GET /messages shows the new channel", async () => {
    const to = await m.createStream(org.owner, "flags target", [org.owner, org.member, org.member2]);
    const a = await m.send(org.member, { type: "stream", to: "general", topic: "flagged", content: `hey @**${org.member2.full_name}**` });
    const b = await m.send(org.member, { type: "stream", to: "general", topic: "flagged", content: "plain" });
    await m.ok(await m.call("POST", "/messages/flags", org.member2, { messages: JSON.stringify([b]), op: "add", flag: "starred" }));
    const quiet = { send_notification_to_new_thread: false };
    await m.ok(await edit(org.member, a, { topic: "flagged 2", propagate_mode: "change_all", ...quiet }));
    expect((await getOne(org.member2, a)).flags).toEqual(["mentioned"]);
    expect((await getOne(org.member2, b)).flags).toEqual(["starred"]);
    await m.ok(await edit(org.owner, a, { stream_id: to, propagate_mode: "change_all", ...quiet }));
    const listed = await m.ok(
      await m.call("GET", "/messages", org.member2, { anchor: "newest", num_before: 10, narrow: JSON.stringify([["channel", "flags target"], ["topic", "flagged 2"]]) }),
    );
    expect(listed.messages.map((x: any) => [x.id, x.stream_id, x.display_recipient, x.subject, x.flags])).toEqual([
      [a, to, "flags target", "flagged 2", ["mentioned"]],
      [b, to, "flags target", "flagged 2", ["starred"]],
    ]);
    const state = await m.ok(await m.call("POST", "/internal/register_state/messaging", org.member2, { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) }));
    expect(state.unread_msgs.mentions).toContain(a);
    expect(state.unread_msgs.streams.filter((s: any) => s.unread_message_ids.includes(a)).map((s: any) => [s.stream_id, s.topic])).toEqual([[to, "flagged 2"]]);
  });

  it("edit history and GET /messages/{id}/history after a topic move and a channel move", async () => {
    const to = await m.createStream(org.owner, "history target", [org.owner, org.member]);
    const sentAt = m.clock.now();
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "travels", content: "on the road" });
    m.clock.advance(1_000);
    const topicAt = m.clock.now();
    await m.ok(await edit(org.member, id, { topic: "travelled", send_notification_to_new_thread: false }));
    m.clock.advance(1_000);
    const moveAt = m.clock.now();
    await m.ok(await edit(org.owner, id, { stream_id: to, send_notification_to_new_thread: false }));
    const message = await getOne(org.member, id);
    expect(message.last_edit_timestamp).toBe(sec(moveAt));
    expect(message.edit_history).toEqual([
      { user_id: org.owner.user_id, timestamp: sec(moveAt), prev_stream: general, stream: to },
      { user_id: org.member.user_id, timestamp: sec(topicAt), prev_topic: "travels", topic: "travelled" },
    ]);
    const history = (await m.ok(await m.call("GET", `/messages/${id}/history`, org.member))).message_history;
    const base = { content: "on the road", rendered_content: "<p>on the road</p>" };
    expect(history).toEqual([
      { ...base, topic: "travels", timestamp: sec(sentAt), user_id: org.member.user_id },
      { ...base, topic: "travelled", prev_topic: "travels", timestamp: sec(topicAt), user_id: org.member.user_id },
      { ...base, topic: "travelled", prev_stream: general, stream: to, timestamp: sec(moveAt), user_id: org.owner.user_id },
    ]);
  });
});

describe("topic visibility policies on a whole-topic move", () => {
  const setPolicy = async (who: Org["member"], topic: string, policy: number) =>
    m.ok(await m.call("POST", "/user_topics", who, { stream_id: general, topic, visibility_policy: policy }));
  const policiesOf = async (who: Org["member"]) => {
    const state = await m.ok(await m.call("POST", "/internal/register_state/messaging", who, { fetch_event_types: JSON.stringify(["user_topic"]) }));
    return Object.fromEntries(
      state.user_topics.filter((t: any) => t.stream_id === general && t.topic_name.startsWith("merge")).map((t: any) => [t.topic_name, t.visibility_policy]),
    );
  };

  it("into a topic with messages: the old topic's policies go, and each user's two policies merge, the more visible winning", async () => {
    const moved = await m.send(org.member2, { type: "stream", to: "general", topic: "merge from", content: "joining" });
    await m.send(org.member2, { type: "stream", to: "general", topic: "merge into", content: "already here" });
    // [user, policy on the moved topic, policy on the target topic, policy on the target after]
    const cases: Array<[Org["member"], number, number, number]> = [
      [org.owner, 2, 1, 2],
      [org.admin, 0, 1, 0],
      [org.moderator, 1, 1, 1],
      [org.member, 3, 0, 3],
      [org.member2, 1, 0, 0],
      [org.guest, 1, 3, 3],
    ];
    for (const [who, from, into] of cases) {
      await setPolicy(who, "merge from", from);
      await setPolicy(who, "merge into", into);
    }
    await m.outbox();
    await m.ok(await edit(org.owner, moved, { topic: "merge into", propagate_mode: "change_all", send_notification_to_new_thread: false }));
    for (const [who, , , after] of cases) {
      expect(await policiesOf(who), who.full_name).toEqual(after === 0 ? {} : { "merge into": after });
    }
    // Each change reaches its user as a user_topic event: the old topic's policy dropped first.
    const changes = (await m.clientEvents()).filter((e) => e.type === "messaging.user_topic.updated").map((e) => [e.users[0], e.event.topic_name, e.event.visibility_policy]);
    expect(changes.filter((c) => c[0] === org.owner.user_id)).toEqual([[org.owner.user_id, "merge from", 0], [org.owner.user_id, "merge into", 2]]);
    expect(changes.filter((c) => c[0] === org.admin.user_id)).toEqual([[org.admin.user_id, "merge into", 0]]);
    expect(changes.filter((c) => c[0] === org.moderator.user_id)).toEqual([[org.moderator.user_id, "merge from", 0]]);
  });

  it("change_all moves them even when messages the mover cannot read stay behind", async () => {
    const vault = await m.createStream(org.owner, "late vault", [org.owner, org.member2], { invite_only: true, history_public_to_subscribers: false });
    await m.send(org.member2, { type: "stream", to: "late vault", topic: "merge shared", content: "before the admin came" });
    await m.createStream(org.owner, "late vault", [org.admin]);
    const seen = await m.send(org.member2, { type: "stream", to: "late vault", topic: "merge shared", content: "after" });
    await m.ok(await m.call("POST", "/user_topics", org.owner, { stream_id: vault, topic: "merge shared", visibility_policy: 1 }));
    await m.ok(await edit(org.admin, seen, { stream_id: general, propagate_mode: "change_all", send_notification_to_new_thread: false }));
    expect((await policiesOf(org.owner))["merge shared"]).toBe(1);
    const state = await m.ok(await m.call("POST", "/internal/register_state/messaging", org.owner, { fetch_event_types: JSON.stringify(["user_topic"]) }));
    expect(state.user_topics.filter((t: any) => t.stream_id === vault)).toEqual([]);
  });
});

describe("the update_message event", () => {
  it("content and topic at once with change_later: every field, the ids ascending, each reader's flags", async () => {
    const a = await m.send(org.member, { type: "stream", to: "general", topic: "combined", content: "first" });
    const b = await m.send(org.member, { type: "stream", to: "general", topic: "combined", content: "/me waves" });
    const c = await m.send(org.member2, { type: "stream", to: "general", topic: "combined", content: "third" });
    await m.outbox();
    m.clock.advance(3_000);
    await m.ok(await edit(org.member, b, { topic: "combined 2", content: "/me waves again", propagate_mode: "change_later", send_notification_to_new_thread: false }));
    const events = await m.clientEvents();
    expect(events.map((e) => e.type)).toEqual(["messaging.message.updated"]);
    const [ev] = events;
    expect(ev.event).toEqual({
      type: "update_message",
      user_id: org.member.user_id,
      edit_timestamp: sec(m.clock.now()),
      message_id: b,
      message_ids: [b, c],
      rendering_only: false,
      stream_name: "general",
      stream_id: general,
      orig_content: "/me waves",
      orig_rendered_content: expect.stringContaining("waves"),
      content: "/me waves again",
      rendered_content: expect.stringContaining("waves again"),
      prev_rendered_content_version: 1,
      is_me_message: true,
      propagate_mode: "change_later",
      orig_subject: "combined",
      subject: "combined 2",
      topic_links: [],
    });
    expect(ev.users.map((u: any) => u.id).sort(byId)).toEqual([org.owner, org.admin, org.moderator, org.member, org.member2, org.guest].map((u) => u.user_id).sort(byId));
    // The other moved message's history records the move only; the untouched one has none.
    expect((await getOne(org.owner, c)).edit_history).toEqual([{ user_id: org.member.user_id, timestamp: sec(m.clock.now()), prev_topic: "combined", topic: "combined 2" }]);
    expect((await getOne(org.owner, a)).edit_history).toBeUndefined();
    expect((await getOne(org.owner, a)).subject).toBe("combined");
  });
});
