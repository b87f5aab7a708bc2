import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoUser } from "@chat/testkit";
import { ok, typesOf, useDemoStack } from "@chat/testkit/e2e";
import { CAPABILITIES, verifierFor } from "./verify-kit";

/**
 * Zulip's verify_action (register, act through the public API, apply the events GET /events
 * delivers, compare with a fresh register) for the message and channel events and variants
 * that e2e.test.ts and the accounts e2e files leave out: edits and moves, deletions of direct
 * messages, reactions, widgets, uploads, the bulk read markers and each subscription property.
 * Channel properties and accounts' events: verify-actions-accounts.e2e.test.ts; the helpers:
 * verify-kit.ts.
 */

let org: DemoOrg;
const e2e = useDemoStack(
  { serviceEnv: { gateway: { RATE_LIMITING_ENABLED: "false" } } },
  ({ demo }) => ([org] = demo.orgs),
);
const { as } = e2e;

const { verifyAction, sendBefore: sendBeforeTo, makeChannel } = verifierFor(as);

const member = () => org.users.member;
const other = () => org.users.member2;
const admin = () => org.users.admin;
const pub = () => org.channels.public.stream_id;

const send = async (u: DemoUser, params: Record<string, unknown>) => ok(await as(u).post("/messages", params)).id as number;

/** A message sent before an action under test, once its event reached the member's queues. */
const sendBefore = (u: DemoUser, params: Record<string, unknown>) => sendBeforeTo(member(), u, params);

/** A channel the administrator makes with these subscribers, its creation's events over. */
const channel = (name: string, subscribers: DemoUser[], extra: Record<string, unknown> = {}) => makeChannel(member(), admin(), name, subscribers, extra);

describe("verify action: message edits and moves", () => {
  it("a content edit that adds a mention, and one that takes it away", async () => {
    const id = await sendBefore(other(), { type: "stream", to: pub(), topic: "edits", content: "plain" });
    const mention = await verifyAction(member(), async () => ok(await as(other()).patch(`/messages/${id}`, { content: `now @**${member().full_name}**` })));
    expect(mention).toEqual([expect.objectContaining({ type: "update_message", message_id: id, flags: expect.arrayContaining(["mentioned"]) })]);
    const plain = await verifyAction(member(), async () => ok(await as(other()).patch(`/messages/${id}`, { content: "plain again" })));
    expect(typesOf(plain)).toEqual(["update_message"]);
    expect(plain[0].flags).not.toContain("mentioned");
  });

  it("a topic move of the whole topic, with and without a content change", async () => {
    const first = await sendBefore(other(), { type: "stream", to: pub(), topic: "move me", content: "one" });
    const second = await sendBefore(other(), { type: "stream", to: pub(), topic: "move me", content: "two" });
    const moved = await verifyAction(member(), async () =>
      ok(await as(other()).patch(`/messages/${first}`, { topic: "moved here", propagate_mode: "change_all", send_notification_to_new_thread: false })));
    expect(typesOf(moved)).toEqual(["update_message"]);
    expect(moved[0]).toMatchObject({ subject: "moved here", orig_subject: "move me", message_ids: [first, second] });
    const both = await verifyAction(member(), async () =>
      ok(await as(other()).patch(`/messages/${second}`, { topic: "moved again", content: "two, edited", propagate_mode: "change_one", send_notification_to_new_thread: false })));
    expect(both).toEqual([expect.objectContaining({ type: "update_message", subject: "moved again", content: "two, edited", message_ids: [second] })]);
  });

  it("a move to another channel, and one to a channel the member cannot see (a deletion to them)", async () => {
    const elsewhere = await channel(`moved-to-${Date.now()}`, [admin(), member(), other()]);
    const id = await sendBefore(other(), { type: "stream", to: pub(), topic: "travel", content: "going places" });
    const moved = await verifyAction(member(), async () =>
      ok(await as(admin()).patch(`/messages/${id}`, { stream_id: elsewhere, propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false })));
    expect(moved).toEqual([expect.objectContaining({ type: "update_message", stream_id: pub(), new_stream_id: elsewhere, message_ids: [id] })]);

    const hidden = await channel(`hidden-${Date.now()}`, [admin()], { invite_only: true });
    // Not the member's newest message: a deletion of that one leaves max_message_id to the database.
    await sendBefore(other(), { type: "direct", to: [member().user_id], content: "newer" });
    const gone = await verifyAction(member(), async () =>
      ok(await as(admin()).patch(`/messages/${id}`, { stream_id: hidden, propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false })));
    expect(gone).toEqual([expect.objectContaining({ type: "delete_message", message_ids: [id], message_type: "stream", stream_id: elsewhere })]);
  });

  it("a muted topic moved whole: its visibility policy goes with it", async () => {
    await sendBefore(other(), { type: "stream", to: pub(), topic: "quiet corner", content: "muted, then moved" });
    const first = await sendBefore(other(), { type: "stream", to: pub(), topic: "quiet corner", content: "and this" });
    ok(await as(member()).post("/user_topics", { stream_id: pub(), topic: "quiet corner", visibility_policy: 1 }));
    const moved = await verifyAction(member(), async () =>
      ok(await as(other()).patch(`/messages/${first}`, { topic: "quiet room", propagate_mode: "change_all", send_notification_to_new_thread: false })));
    expect(typesOf(moved)).toContain("update_message");
  });

  it("the later messages of a topic moved to a channel the member is not subscribed to", async () => {
    const name = `unsubscribed-target-${Date.now()}`;
    const target = await channel(name, [admin(), other()]);
    await sendBefore(other(), { type: "stream", to: pub(), topic: "split", content: "stays" });
    const later = await sendBefore(other(), { type: "stream", to: pub(), topic: "split", content: "moves" });
    await sendBefore(other(), { type: "stream", to: pub(), topic: "split", content: "moves too" });
    ok(await as(member()).post("/messages/flags", { messages: [later], op: "add", flag: "starred" }));
    // Not the member's newest message: losing that one leaves max_message_id to the database.
    await sendBefore(other(), { type: "direct", to: [member().user_id], content: "newer" });
    const moved = await verifyAction(member(), async () =>
      ok(await as(admin()).patch(`/messages/${later}`, { stream_id: target, topic: "Split", propagate_mode: "change_later", send_notification_to_old_thread: false, send_notification_to_new_thread: false })));
    expect(moved).toEqual([expect.objectContaining({ type: "update_message", new_stream_id: target, subject: "Split" })]);
  });

  it("messages moved in from a channel the member is not in: to a public channel, and to a private one without shared history", async () => {
    const source = await channel(`source-${Date.now()}`, [admin(), other()]);
    const first = await send(other(), { type: "stream", to: source, topic: "incoming", content: "one" });
    const second = await send(other(), { type: "stream", to: source, topic: "incoming 2", content: "two" });
    await sendBefore(other(), { type: "direct", to: [member().user_id], content: "settled" });
    const toPublic = await verifyAction(member(), async () =>
      ok(await as(admin()).patch(`/messages/${first}`, { stream_id: pub(), propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false })));
    expect(typesOf(toPublic)).not.toContain("delete_message");
    const closed = await channel(`closed-${Date.now()}`, [admin(), member()], { invite_only: true, history_public_to_subscribers: false });
    const toPrivate = await verifyAction(member(), async () =>
      ok(await as(admin()).patch(`/messages/${second}`, { stream_id: closed, propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false })));
    // The channel's first message, if it had none.
    for (const e of toPrivate.filter((e) => e.type === "stream")) expect(e).toMatchObject({ op: "update", property: "first_message_id", value: second });
    expect(typesOf(toPrivate)).not.toContain("delete_message");
  });

  it("wildcard mentions in a muted channel: not listed, but listed in a followed topic; edited in; read and unread again", async () => {
    // (A followed or unmuted topic after the mention would list it too: no state tells a client
    // which unlisted unread messages are wildcard mentions, so that change is not verified here.)
    const muted = await channel(`wild-${Date.now()}`, [admin(), member(), other()]);
    ok(await as(member()).post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: muted, property: "is_muted", value: true }] }));
    const followed = await verifyAction(member(), async () => ok(await as(member()).post("/user_topics", { stream_id: muted, topic: "all hands", visibility_policy: 3 })));
    expect(typesOf(followed)).toContain("user_topic");
    const quiet = await verifyAction(member(), () => send(other(), { type: "stream", to: muted, topic: "quiet", content: "@**all** hello" }));
    expect(quiet[0].flags).toContain("stream_wildcard_mentioned");
    const loud = await verifyAction(member(), () => send(other(), { type: "stream", to: muted, topic: "all hands", content: "@**all** hello" }));
    expect(loud[0].flags).toContain("stream_wildcard_mentioned");
    const id = await sendBefore(other(), { type: "stream", to: muted, topic: "all hands", content: "nothing yet" });
    const edited = await verifyAction(member(), async () => ok(await as(other()).patch(`/messages/${id}`, { content: "@**channel** now" })));
    expect(edited[0].flags).toContain("stream_wildcard_mentioned");
    const read = await verifyAction(member(), async () => ok(await as(member()).post("/messages/flags", { messages: [id], op: "add", flag: "read" })));
    expect(typesOf(read)).toEqual(["update_message_flags/add"]);
    const again = await verifyAction(member(), async () => ok(await as(member()).post("/messages/flags", { messages: [id], op: "remove", flag: "read" })));
    expect(again[0].message_details[String(id)]).toMatchObject({ type: "stream", stream_id: muted, mentioned: true });
  });

  it("a move with the notification bot's notices in both topics", async () => {
    const id = await sendBefore(other(), { type: "stream", to: pub(), topic: "noticed", content: "move with notices" });
    const events = await verifyAction(member(), async () =>
      ok(await as(other()).patch(`/messages/${id}`, { topic: "noticed too", propagate_mode: "change_all", send_notification_to_old_thread: true, send_notification_to_new_thread: true })),
      { include_subscribers: true },
    );
    expect(typesOf(events)).toEqual(expect.arrayContaining(["update_message", "message", "message"]));
  });
});

describe("verify action: deletions, reactions, widgets and uploads", () => {
  it("deleting a direct message and a group direct message, unread and read", async () => {
    // Only administrators delete messages here, and only those they can see: their own.
    const dm = await sendBefore(admin(), { type: "direct", to: [member().user_id], content: "gone soon" });
    await sendBefore(admin(), { type: "direct", to: [member().user_id], content: "stays" });
    const group = await sendBefore(admin(), { type: "direct", to: [member().user_id, other().user_id], content: "group, gone soon" });
    await sendBefore(admin(), { type: "direct", to: [member().user_id, other().user_id], content: "group, stays" });
    ok(await as(member()).post("/messages/flags", { messages: [group], op: "add", flag: "read" }));
    const events = await verifyAction(member(), async () => ok(await as(admin()).delete(`/messages/${dm}`)));
    expect(events).toEqual([expect.objectContaining({ type: "delete_message", message_type: "private", message_ids: [dm] })]);
    const groupEvents = await verifyAction(member(), async () => ok(await as(admin()).delete(`/messages/${group}`)));
    expect(typesOf(groupEvents)).toEqual(["delete_message"]);
  });

  it("deleting a starred message", async () => {
    const id = await sendBefore(other(), { type: "stream", to: pub(), topic: "stars", content: "starred, then gone" });
    await sendBefore(other(), { type: "stream", to: pub(), topic: "stars", content: "after" });
    ok(await as(member()).post("/messages/flags", { messages: [id], op: "add", flag: "starred" }));
    expect(typesOf(await verifyAction(member(), async () => ok(await as(admin()).delete(`/messages/${id}`))))).toEqual(["delete_message"]);
  });

  it("reactions: added and removed, on channel and direct messages", async () => {
    const id = await sendBefore(other(), { type: "stream", to: pub(), topic: "reactions", content: "react" });
    const dm = await sendBefore(other(), { type: "direct", to: [member().user_id], content: "react here too" });
    for (const target of [id, dm]) {
      const added = await verifyAction(member(), async () => ok(await as(other()).post(`/messages/${target}/reactions`, { emoji_name: "octopus" })));
      expect(added).toEqual([expect.objectContaining({ type: "reaction", op: "add", message_id: target, emoji_name: "octopus" })]);
      const removed = await verifyAction(member(), async () => ok(await as(other()).delete(`/messages/${target}/reactions`, { emoji_name: "octopus" })));
      expect(typesOf(removed)).toEqual(["reaction/remove"]);
    }
  });

  it("a widget's submessage", async () => {
    const id = await sendBefore(other(), { type: "direct", to: [member().user_id], content: "/poll Lunch?\nSoup\nSalad" });
    const events = await verifyAction(member(), async () =>
      ok(await as(other()).post("/submessage", { message_id: id, msg_type: "widget", content: JSON.stringify({ type: "vote", key: "canned,0", vote: 1 }) })));
    expect(events).toEqual([expect.objectContaining({ type: "submessage", message_id: id, msg_type: "widget" })]);
  });

  it("an upload, linked by a message, and deleted", async () => {
    let uri = "";
    const added = await verifyAction(member(), async () => {
      uri = ok(await e2e.postFile(member(), "/user_uploads", { name: "notes.txt", type: "text/plain", data: "some notes" })).url;
    });
    expect(typesOf(added)).toEqual(["attachment/add"]);
    const attachmentId = added[0].attachment.id;
    const linked = await verifyAction(member(), () => send(member(), { type: "stream", to: pub(), topic: "files", content: `[notes](${uri})` }));
    expect(typesOf(linked)).toEqual(expect.arrayContaining(["message", "attachment/update"]));
    const removed = await verifyAction(member(), async () => ok(await as(member()).delete(`/attachments/${attachmentId}`)));
    expect(typesOf(removed)).toEqual(["attachment/remove"]);
  });
});

describe("verify action: marking many messages read", () => {
  it("a topic, a channel, then everything", async () => {
    const elsewhere = await channel(`reading-${Date.now()}`, [admin(), member(), other()]);
    for (const topic of ["first", "second"]) await sendBefore(other(), { type: "stream", to: elsewhere, topic, content: `in ${topic}` });
    await sendBefore(other(), { type: "stream", to: pub(), topic: "elsewhere", content: "unread elsewhere" });
    await sendBefore(other(), { type: "direct", to: [member().user_id], content: "unread dm" });
    const topic = await verifyAction(member(), async () => ok(await as(member()).post("/mark_topic_as_read", { stream_id: elsewhere, topic_name: "first" })));
    expect(typesOf(topic)).toEqual(["update_message_flags/add"]);
    const stream = await verifyAction(member(), async () => ok(await as(member()).post("/mark_stream_as_read", { stream_id: elsewhere })));
    expect(typesOf(stream)).toEqual(["update_message_flags/add"]);
    const all = await verifyAction(member(), async () => ok(await as(member()).post("/mark_all_as_read")));
    expect(typesOf(all)).toEqual(["update_message_flags/add"]);
    expect(all[0]).toMatchObject({ flag: "read" });
  });
});

describe("verify action: subscription properties", () => {
  it("each notification setting, the legacy in_home_view, and a legacy client's view", async () => {
    const set = (property: string, value: unknown) => async () =>
      ok(await as(member()).post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: pub(), property, value }] }));
    for (const property of ["desktop_notifications", "audible_notifications", "push_notifications", "email_notifications", "wildcard_mentions_notify"]) {
      const events = await verifyAction(member(), set(property, true));
      expect(events, property).toEqual([expect.objectContaining({ type: "subscription", op: "update", property, value: true })]);
    }
    await sendBefore(other(), { type: "stream", to: pub(), topic: "home view", content: "unread while the channel is muted" });
    const hidden = await verifyAction(member(), set("in_home_view", false));
    expect(hidden.map((e) => e.property)).toEqual(expect.arrayContaining(["in_home_view", "is_muted"]));
    expect(typesOf(await verifyAction(member(), set("in_home_view", true)))).toEqual(["subscription/update", "subscription/update"]);
    // A legacy client (no notification_settings_null) sees the setting's value.
    const legacy = await verifyAction(member(), set("desktop_notifications", false), { client_capabilities: { ...CAPABILITIES, notification_settings_null: false } });
    expect(typesOf(legacy)).toEqual(["subscription/update"]);
  });

  it("topics followed and unmuted in a muted channel", async () => {
    const muted = await channel(`muted-${Date.now()}`, [admin(), member(), other()]);
    ok(await as(member()).post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: muted, property: "is_muted", value: true }] }));
    await sendBefore(other(), { type: "stream", to: muted, topic: "followed", content: "in a muted channel" });
    await sendBefore(other(), { type: "stream", to: muted, topic: "unmuted", content: "also in a muted channel" });
    const follow = await verifyAction(member(), async () => ok(await as(member()).post("/user_topics", { stream_id: muted, topic: "followed", visibility_policy: 3 })));
    expect(typesOf(follow)).toContain("user_topic");
    const unmute = await verifyAction(member(), async () => ok(await as(member()).post("/user_topics", { stream_id: muted, topic: "unmuted", visibility_policy: 2 })));
    expect(typesOf(unmute)).toContain("user_topic");
    const back = await verifyAction(member(), async () => ok(await as(member()).post("/user_topics", { stream_id: muted, topic: "followed", visibility_policy: 0 })));
    expect(typesOf(back)).toContain("user_topic");
  });
});
