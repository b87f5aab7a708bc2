import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * POST /mark_all_as_read, /mark_stream_as_read and /mark_topic_as_read (Zulip's deprecated but
 * still used endpoints): the user's unread messages in scope become read, announced with
 * POST /messages/flags' update_message_flags event to the user only.
 */
let m: Messaging;
let org: Org;
let other: Org;
let general: number;
let lounge: number;
let secret: number;
let theirs: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member, org.member2]);
  lounge = await m.createStream(org.owner, "lounge", [org.owner, org.member, org.member2]);
  secret = await m.createStream(org.owner, "secret", [org.owner, org.member], { invite_only: true });
  theirs = await m.createStream(other.owner, "theirs", [other.owner, other.member]);
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

const post = (path: string, who: TestUser, params: Record<string, unknown> = {}) => m.call("POST", path, who, params);
const toChannel = (to: string, topic: string, content = "hello") => m.send(org.owner, { type: "stream", to, topic, content, read_by_sender: "true" });

/** The ids of `who`'s unread messages (in a channel, if given), ascending. */
async function unread(who: TestUser, channel?: string): Promise<number[]> {
  const narrow = [{ operator: "is", operand: "unread" }, ...(channel ? [{ operator: "channel", operand: channel }] : [])];
  const res = await m.ok(await m.call("GET", "/messages", who, { anchor: "newest", num_before: 1000, narrow: JSON.stringify(narrow) }));
  return res.messages.map((x: { id: number }) => x.id);
}

/** The update_message_flags events written since the last read, with their audiences. */
async function flagEvents() {
  const events = await m.clientEvents();
  expect(events.every((e) => e.type === "messaging.message_flags.updated")).toBe(true);
  return events.map((e) => ({ event: e.event, users: e.users }));
}

const readEvent = (messages: number[], all = false) => ({ type: "update_message_flags", op: "add", operation: "add", flag: "read", messages, all });

describe("POST /mark_topic_as_read", () => {
  it("reads the user's unread messages of the topic, whatever its case, and tells only that user", async () => {
    const a = await toChannel("general", "Coffee");
    const b = await toChannel("general", "coffee");
    const elsewhere = await toChannel("general", "tea");
    const otherChannel = await toChannel("lounge", "coffee");
    await m.outbox();

    const res = await post("/mark_topic_as_read", org.member, { stream_id: general, topic_name: "COFFEE" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "" });
    expect(await flagEvents()).toEqual([{ event: readEvent([a, b]), users: [org.member.user_id] }]);
    const left = await unread(org.member);
    expect(left).not.toContain(a);
    expect(left).not.toContain(b);
    expect(left).toEqual(expect.arrayContaining([elsewhere, otherChannel]));
    // Nobody else's messages changed.
    expect(await unread(org.member2)).toEqual(expect.arrayContaining([a, b]));

    // Nothing left to read there: success, and no event.
    expect((await post("/mark_topic_as_read", org.member, { stream_id: general, topic_name: "coffee" })).body).toEqual({ result: "success", msg: "" });
    expect(await m.clientEvents()).toEqual([]);
  });

  it("refuses a topic the user has no message in: No such topic", async () => {
    await toChannel("general", "news");
    await m.outbox();
    expectError(await post("/mark_topic_as_read", org.member, { stream_id: general, topic_name: "nothing here" }), 400, "BAD_REQUEST", "No such topic 'nothing here'");
    // The topic exists in another channel only.
    expectError(await post("/mark_topic_as_read", org.member, { stream_id: lounge, topic_name: "news" }), 400, "BAD_REQUEST", "No such topic 'news'");
    expect(await m.clientEvents()).toEqual([]);
  });

  it("an empty topic name reads the whole channel, as Zulip's does", async () => {
    const x = await toChannel("lounge", "one");
    const y = await toChannel("lounge", "two");
    const dm = await m.send(org.member2, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "psst" });
    await m.outbox();
    await m.ok(await post("/mark_topic_as_read", org.member, { stream_id: lounge, topic_name: "" }));
    const [ev] = await flagEvents();
    expect(ev.event.messages).toEqual(expect.arrayContaining([x, y]));
    const left = await unread(org.member);
    expect(left).not.toContain(x);
    expect(left).toContain(dm);
  });
});

describe("POST /mark_stream_as_read", () => {
  it("reads the user's unread messages of the channel only (not direct messages, not other channels)", async () => {
    const g1 = await toChannel("general", "t1");
    const g2 = await toChannel("general", "t2");
    const l1 = await toChannel("lounge", "t1");
    const dm = await m.send(org.member2, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "hi" });
    await m.outbox();
    const inGeneral = await unread(org.member, "general");
    expect(inGeneral).toEqual(expect.arrayContaining([g1, g2]));

    const res = await post("/mark_stream_as_read", org.member, { stream_id: general });
    expect(res.body).toEqual({ result: "success", msg: "" });
    const [ev, ...rest] = await flagEvents();
    expect(rest).toEqual([]);
    expect(ev.users).toEqual([org.member.user_id]);
    expect(ev.event).toEqual(readEvent(inGeneral));
    expect(await unread(org.member, "general")).toEqual([]);
    expect(await unread(org.member)).toEqual(expect.arrayContaining([l1, dm]));

    expect((await post("/mark_stream_as_read", org.member, { stream_id: general })).body).toEqual({ result: "success", msg: "" });
    expect(await m.clientEvents()).toEqual([]);
  });

  it("works in a private channel for its subscribers", async () => {
    const s = await m.send(org.owner, { type: "stream", to: "secret", topic: "plans", content: "shh" });
    await m.outbox();
    await m.ok(await post("/mark_stream_as_read", org.member, { stream_id: secret }));
    expect(await flagEvents()).toEqual([{ event: readEvent([s]), users: [org.member.user_id] }]);
  });
});

describe("channel access and parameters (both endpoints)", () => {
  it("a missing, another organization's or an inaccessible channel is Invalid channel ID, and nothing changes", async () => {
    await m.send(org.owner, { type: "stream", to: "secret", topic: "plans", content: "more" });
    const guestChannel = await m.createStream(org.owner, "guests-not-here", [org.owner]);
    await m.send(org.owner, { type: "stream", to: "guests-not-here", topic: "t", content: "x" });
    await m.outbox();
    const before = await unread(org.owner);
    const cases: Array<[TestUser, number]> = [
      [org.member, 999_999_999],
      [org.member, theirs],
      // Private channel, not subscribed: not even an administrator (no exception here, as in Zulip).
      [org.member2, secret],
      [org.admin, secret],
      // Guests reach only channels they are subscribed to (or web-public ones).
      [org.guest, guestChannel],
    ];
    for (const [who, streamId] of cases) {
      expectError(await post("/mark_stream_as_read", who, { stream_id: streamId }), 400, "BAD_REQUEST", "Invalid channel ID");
      expectError(await post("/mark_topic_as_read", who, { stream_id: streamId, topic_name: "plans" }), 400, "BAD_REQUEST", "Invalid channel ID");
    }
    expect(await m.clientEvents()).toEqual([]);
    expect(await unread(org.owner)).toEqual(before);
  });

  it("checks its parameters as Zulip does", async () => {
    expectError(await post("/mark_stream_as_read", org.member, {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'stream_id' argument");
    expectError(await post("/mark_stream_as_read", org.member, { stream_id: "general" }), 400, "BAD_REQUEST", "stream_id is not valid JSON");
    expectError(await post("/mark_stream_as_read", org.member, { stream_id: "\"1\"" }), 400, "BAD_REQUEST", "stream_id is not an integer");
    expectError(await post("/mark_topic_as_read", org.member, { stream_id: general }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'topic_name' argument");
    expectError(await post("/mark_topic_as_read", org.member, { topic_name: "t" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'stream_id' argument");
    expect(await m.clientEvents()).toEqual([]);
  });
});

describe("POST /mark_all_as_read", () => {
  it("reads every unread message of the user and answers complete; the event says all, with no ids", async () => {
    await toChannel("general", "all-1");
    await toChannel("lounge", "all-2");
    await m.send(org.owner, { type: "stream", to: "secret", topic: "all-3", content: "x" });
    const dm = await m.send(org.member2, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "all-4" });
    const foreign = await m.send(other.owner, { type: "stream", to: "theirs", topic: "t", content: "x" });
    await m.outbox();
    const member2Before = await unread(org.member2);
    expect(member2Before.length).toBeGreaterThan(0);

    const res = await post("/mark_all_as_read", org.member);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "", complete: true });
    expect(await flagEvents()).toEqual([{ event: readEvent([], true), users: [org.member.user_id] }]);
    expect(await unread(org.member)).toEqual([]);
    // Only the caller's messages: the sender of the direct message and the other organization keep theirs.
    expect(await unread(org.member2)).toEqual(member2Before);
    expect(await unread(other.member)).toEqual([foreign]);
    expect(dm).toBeGreaterThan(0);
  });

  it("with nothing unread still answers complete and sends the event, as Zulip does", async () => {
    await m.ok(await post("/mark_all_as_read", org.member));
    await m.outbox();
    expect((await post("/mark_all_as_read", org.member)).body).toEqual({ result: "success", msg: "", complete: true });
    expect(await flagEvents()).toEqual([{ event: readEvent([], true), users: [org.member.user_id] }]);
  });

  it("lists unsupported parameters as ignored", async () => {
    const res = await post("/mark_all_as_read", org.member2, { stream_id: general });
    expect(res.body).toEqual({ result: "success", msg: "", complete: true, ignored_parameters_unsupported: ["stream_id"] });
  });
});
