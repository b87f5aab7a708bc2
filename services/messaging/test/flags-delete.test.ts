import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let other: Org;
let general: number;
let g1: number;
let g2: number;
let s1: number;
let dm: number;
let foreign: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member, org.member2]);
  await m.createStream(org.owner, "secret", [org.owner], { invite_only: true });
  await m.createStream(other.owner, "theirs", [other.owner]);
  g1 = await m.send(org.owner, { type: "stream", to: "general", topic: "t", content: "one @**Mel Member**" });
  g2 = await m.send(org.owner, { type: "stream", to: "general", topic: "t", content: "two" });
  s1 = await m.send(org.owner, { type: "stream", to: "secret", topic: "t", content: "hidden" });
  dm = await m.send(org.member2, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "hi" });
  foreign = await m.send(other.owner, { type: "stream", to: "theirs", topic: "t", content: "x" });
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

const flags = (who: Org["member"], params: Record<string, unknown>) => m.call("POST", "/messages/flags", who, params);

describe("POST /messages/flags", () => {
  it("marks read and reports only the ids that changed, with an update_message_flags event", async () => {
    const res = await m.ok(await flags(org.member, { messages: JSON.stringify([g1, g2]), op: "add", flag: "read" }));
    expect(res.messages).toEqual([g1, g2]);
    const again = await m.ok(await flags(org.member, { messages: JSON.stringify([g1, g2, dm]), op: "add", flag: "read" }));
    expect(again.messages).toEqual([dm]);
    const events = await m.clientEvents();
    expect(events.map((e) => e.type)).toEqual(["messaging.message_flags.updated", "messaging.message_flags.updated"]);
    expect(events[0].event).toEqual({ type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [g1, g2], all: false });
    expect(events[0].users).toEqual([org.member.user_id]);
  });

  it("marking unread carries message_details", async () => {
    const res = await m.ok(await flags(org.member, { messages: JSON.stringify([g1, dm]), op: "remove", flag: "read" }));
    expect(res.messages).toEqual([g1, dm]);
    const [ev] = await m.clientEvents();
    expect(ev.event.message_details).toEqual({
      [String(g1)]: { type: "stream", stream_id: general, topic: "t", unmuted_stream_msg: true, mentioned: true },
      [String(dm)]: { type: "private", user_ids: [org.member2.user_id] },
    });
  });

  it("message_details judge muting as register does: a muted topic does not count, and a wildcard mention in it is no mention", async () => {
    await m.ok(await m.call("POST", "/user_topics", org.member2, { stream_id: general, topic: "hush", visibility_policy: 1 }));
    const hushed = await m.send(org.owner, { type: "stream", to: "general", topic: "hush", content: "@**all** quiet please" });
    const loud = await m.send(org.owner, { type: "stream", to: "general", topic: "loud", content: "@**all** listen" });
    const unread = async () => (await m.ok(await m.call("POST", "/internal/register_state/messaging", org.member2, { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) }))).unread_msgs;
    const before = await unread();
    await m.ok(await flags(org.member2, { messages: JSON.stringify([hushed, loud]), op: "add", flag: "read" }));
    await m.outbox();
    await m.ok(await flags(org.member2, { messages: JSON.stringify([hushed, loud]), op: "remove", flag: "read" }));
    const [ev] = await m.clientEvents();
    expect(ev.event.message_details).toEqual({
      [String(hushed)]: { type: "stream", stream_id: general, topic: "hush", unmuted_stream_msg: false },
      [String(loud)]: { type: "stream", stream_id: general, topic: "loud", unmuted_stream_msg: true, mentioned: true },
    });
    // The same judgement as register's unread_msgs.
    const after = await unread();
    expect(after).toEqual(before);
    expect(after.mentions).toContain(loud);
    expect(after.mentions).not.toContain(hushed);
    expect(after.streams).toContainEqual({ stream_id: general, topic: "hush", unread_message_ids: [hushed] });
  });

  it("stars and unstars; starring a public message one never received adds it to one's history", async () => {
    expect((await m.ok(await flags(org.member, { messages: JSON.stringify([g2]), op: "add", flag: "starred" }))).messages).toEqual([g2]);
    expect((await m.ok(await flags(org.member, { messages: JSON.stringify([g2]), op: "remove", flag: "starred" }))).messages).toEqual([g2]);
    expect((await m.ok(await flags(org.admin, { messages: JSON.stringify([g1]), op: "add", flag: "starred" }))).messages).toEqual([g1]);
    const res = await m.ok(await m.call("GET", `/messages/${g1}`, org.admin));
    expect(res.message.flags).toEqual(["read", "starred", "historical"]);
    await m.ok(await flags(org.member, { messages: JSON.stringify([g1]), op: "add", flag: "collapsed" }));
    expect((await m.ok(await m.call("GET", `/messages/${g1}`, org.member))).message.flags).toContain("collapsed");
  });

  it("concurrent stars of a message read through channel history all succeed, and the flag changes once", async () => {
    const id = await m.send(org.owner, { type: "stream", to: "general", topic: "race", content: "star me at once" });
    await m.outbox();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => flags(org.admin, { messages: JSON.stringify([id]), op: "add", flag: i % 2 ? "starred" : "collapsed" })),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
    const changed = answers.map((r) => r.body.messages as number[]);
    expect(changed.filter((ids) => ids.length > 0)).toHaveLength(2);
    const events = (await m.clientEvents()).filter((e) => e.type === "messaging.message_flags.updated");
    expect(events.map((e) => e.event.flag).sort()).toEqual(["collapsed", "starred"]);
    expect((await m.ok(await m.call("GET", `/messages/${id}`, org.admin))).message.flags).toEqual(["read", "starred", "collapsed", "historical"]);
  });

  it("refuses invalid flags, non-editable flags, bad operations and inaccessible messages, changing nothing", async () => {
    const before = await m.deps.pool.query("SELECT sum(flags)::int AS s FROM usermessages");
    expectError(await flags(org.member, { messages: JSON.stringify([g1]), op: "add", flag: "shiny" }), 400, "BAD_REQUEST", "Invalid flag: 'shiny'");
    for (const flag of ["mentioned", "wildcard_mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned", "has_alert_word", "historical"]) {
      expectError(await flags(org.member, { messages: JSON.stringify([g1]), op: "add", flag }), 400, "BAD_REQUEST", `Flag not editable: '${flag}'`);
    }
    expectError(await flags(org.member, { messages: JSON.stringify([g1]), op: "toggle", flag: "read" }), 400, "BAD_REQUEST", "Invalid message flag operation: 'toggle'");
    for (const id of [s1, foreign, 999999]) {
      expectError(await flags(org.member, { messages: JSON.stringify([g1, id]), op: "add", flag: "starred" }), 400, "BAD_REQUEST", "Invalid message(s)");
    }
    expectError(await flags(org.member, { op: "add", flag: "read" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'messages' argument");
    expectError(await flags(org.member, { messages: "[1,", op: "add", flag: "read" }), 400, "BAD_REQUEST", "messages is not valid JSON");
    expectError(await flags(org.member, { messages: '["a"]', op: "add", flag: "read" }), 400, "BAD_REQUEST");
    expectError(await flags(org.member, { messages: JSON.stringify([g1]), flag: "read" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'op' argument");
    const after = await m.deps.pool.query("SELECT sum(flags)::int AS s FROM usermessages");
    expect(after.rows[0].s).toBe(before.rows[0].s);
    expect(await m.clientEvents()).toEqual([]);
  });
});

describe("DELETE /messages/{id}", () => {
  it("a member may not delete, even their own message", async () => {
    const own = await m.send(org.member, { type: "stream", to: "general", topic: "t", content: "mine" });
    await m.outbox();
    expectError(await m.call("DELETE", `/messages/${own}`, org.member), 400, "BAD_REQUEST", "You don't have permission to delete this message");
    expectError(await m.call("DELETE", `/messages/${own}`, org.moderator), 400, "BAD_REQUEST", "You don't have permission to delete this message");
    expect((await m.ok(await m.call("GET", `/messages/${own}`, org.member))).message.id).toBe(own);
    expect(await m.clientEvents()).toEqual([]);
  });

  it("an administrator deletes it for everyone who had it", async () => {
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "oops", content: "delete me" });
    await m.outbox();
    await m.ok(await m.call("DELETE", `/messages/${id}`, org.admin));
    const [ev] = await m.clientEvents();
    expect(ev.type).toBe("messaging.message.deleted");
    expect(ev.event).toEqual({ type: "delete_message", message_type: "stream", message_id: id, stream_id: general, topic: "oops" });
    expect([...ev.users].sort((a: number, b: number) => a - b)).toEqual([org.owner, org.member, org.member2].map((u) => u.user_id).sort((a, b) => a - b));
    expectError(await m.call("GET", `/messages/${id}`, org.member), 400, "BAD_REQUEST", "Invalid message(s)");
    expectError(await m.call("DELETE", `/messages/${id}`, org.admin), 400, "BAD_REQUEST", "Invalid message(s)");
  });

  it("concurrent deletes of one message: one succeeds, the others find it gone, one event", async () => {
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "race", content: "delete me at once" });
    await m.outbox();
    const answers = await Promise.all(Array.from({ length: 8 }, () => m.call("DELETE", `/messages/${id}`, org.admin)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
    for (const r of answers.filter((a) => a.status === 400)) expectError(r, 400, "BAD_REQUEST", "Invalid message(s)");
    expect((await m.clientEvents()).filter((e) => e.type === "messaging.message.deleted")).toHaveLength(1);
  });

  it("subscribers who joined after the message hear of its deletion, unless the channel's history is protected", async () => {
    await m.createStream(org.owner, "open late", [org.owner]);
    await m.createStream(org.owner, "closed late", [org.owner], { invite_only: true, history_public_to_subscribers: false });
    const open = await m.send(org.owner, { type: "stream", to: "open late", topic: "t", content: "before member2" });
    const closed = await m.send(org.owner, { type: "stream", to: "closed late", topic: "secret topic", content: "before member2" });
    for (const name of ["open late", "closed late"]) {
      await m.ok(await m.call("POST", "/users/me/subscriptions", org.owner, { subscriptions: JSON.stringify([{ name }]), principals: JSON.stringify([org.member2.user_id]) }));
    }
    await m.outbox();
    await m.ok(await m.call("DELETE", `/messages/${open}`, org.admin));
    // An administrator outside a channel with protected history cannot reach it; its owner can.
    await m.ok(await m.call("DELETE", `/messages/${closed}`, org.owner));
    const deleted = (await m.clientEvents()).filter((e) => e.type === "messaging.message.deleted");
    expect(deleted.map((e) => [e.event.message_id, [...e.users].sort((a: number, b: number) => a - b)])).toEqual([
      [open, [org.owner.user_id, org.member2.user_id].sort((a, b) => a - b)],
      [closed, [org.owner.user_id]],
    ]);
  });

  it("direct messages: only those who can read it; first_message_id follows deletions, with a stream update event", async () => {
    expectError(await m.call("DELETE", `/messages/${dm}`, org.admin), 400, "BAD_REQUEST", "Invalid message(s)");
    const first = await m.createStream(org.owner, "fresh", [org.owner]);
    const a = await m.send(org.owner, { type: "stream", to: "fresh", topic: "t", content: "a" });
    const b = await m.send(org.owner, { type: "stream", to: "fresh", topic: "t", content: "b" });
    await m.outbox();
    await m.ok(await m.call("DELETE", `/messages/${b}`, org.owner));
    // Not the oldest: first_message_id stays, no stream event.
    expect((await m.clientEvents()).map((e) => e.event.type)).toEqual(["delete_message"]);
    const c = await m.send(org.owner, { type: "stream", to: "fresh", topic: "t", content: "c" });
    await m.outbox();
    await m.ok(await m.call("DELETE", `/messages/${a}`, org.owner));
    const stream = await m.ok(await m.call("GET", `/streams/${first}`, org.owner));
    expect(stream.stream.first_message_id).toBe(c);
    const [, update] = await m.clientEvents();
    expect(update.event).toEqual({ type: "stream", op: "update", stream_id: first, name: "fresh", property: "first_message_id", value: c });
    // Everyone who can see the public channel: members and administrators, not only its subscriber.
    expect(update.users).toEqual(expect.arrayContaining([org.owner.user_id, org.member.user_id, org.admin.user_id]));
    expect(update.users).not.toContain(org.guest.user_id);
    const dmByOwner = await m.send(org.owner, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "x" });
    await m.outbox();
    await m.ok(await m.call("DELETE", `/messages/${dmByOwner}`, org.owner));
    const [ev] = await m.clientEvents();
    expect(ev.event).toEqual({ type: "delete_message", message_type: "private", message_id: dmByOwner });
  });

  it("a deleted message leaves nobody's starred or unread messages, a historical star included", async () => {
    const state = async (who: Org["member"]) =>
      m.ok(await m.call("POST", "/internal/register_state/messaging", who, { fetch_event_types: JSON.stringify(["starred_messages", "message", "update_message_flags"]) }));
    await m.createStream(org.owner, "lounge", [org.owner, org.member]);
    const id = await m.send(org.owner, { type: "stream", to: "lounge", topic: "t", content: "soon gone" });
    // The member has it unread; member2 never received it and stars it from the channel's history.
    expect((await m.ok(await flags(org.member2, { messages: JSON.stringify([id]), op: "add", flag: "starred" }))).messages).toEqual([id]);
    expect((await state(org.member2)).starred_messages).toContain(id);
    expect(JSON.stringify((await state(org.member)).unread_msgs)).toContain(String(id));
    await m.ok(await m.call("DELETE", `/messages/${id}`, org.admin));
    expect((await state(org.member2)).starred_messages).not.toContain(id);
    expect(JSON.stringify((await state(org.member)).unread_msgs)).not.toContain(String(id));
  });

  it("another organization's message is invalid", async () => {
    expectError(await m.call("DELETE", `/messages/${foreign}`, org.owner), 400, "BAD_REQUEST", "Invalid message(s)");
    expect((await m.ok(await m.call("GET", `/messages/${foreign}`, other.owner))).message.id).toBe(foreign);
  });
});
