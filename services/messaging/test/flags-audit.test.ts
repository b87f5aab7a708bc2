import { withTx } from "@chat/platform";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { doReplicateMutedUsers } from "../src/actions/muted-users";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * Audit of personal message flags and unread state against Zulip (feature level 267): the gaps
 * left by flags-delete, flags-narrow, mark-read and state tests. Historical rows (messages a user
 * reads through channel history), marking unread, message_details for each conversation kind,
 * flags/narrow's anchors, and register's unread_msgs for one's own and muted messages.
 */
let m: Messaging;
let org: Org;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

const flags = (who: TestUser, messages: number[], op: string, flag: string) =>
  m.call("POST", "/messages/flags", who, { messages: JSON.stringify(messages), op, flag });
const byNarrow = (who: TestUser, params: Record<string, unknown>) =>
  m.call("POST", "/messages/flags/narrow", who, { anchor: "oldest", num_before: "0", num_after: "1000", narrow: "[]", ...params });
const flagsOf = async (who: TestUser, id: number) => (await m.ok(await m.call("GET", `/messages/${id}`, who))).message.flags as string[];
const unreadMsgs = async (who: TestUser) =>
  (await m.ok(await m.call("POST", "/internal/register_state/messaging", who, { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) }))).unread_msgs;
const subscribe = (who: TestUser, name: string) => m.call("POST", "/users/me/subscriptions", who, { subscriptions: JSON.stringify([{ name }]) });
const unsubscribe = (who: TestUser, name: string) => m.call("DELETE", "/users/me/subscriptions", who, { subscriptions: JSON.stringify([name]) });

describe("messages from before one subscribed (historical)", () => {
  it("marking one unread gives the user a historical row without read: unread in GET /messages and register", async () => {
    const channel = await m.createStream(org.owner, "late-joiners", [org.owner]);
    const old = await m.send(org.owner, { type: "stream", to: "late-joiners", topic: "past", content: "before you came" });
    await m.ok(await subscribe(org.member, "late-joiners"));
    await m.outbox();
    expect(await flagsOf(org.member, old)).toEqual(["read", "historical"]);

    const res = await m.ok(await flags(org.member, [old], "remove", "read"));
    expect(res.messages).toEqual([old]);
    const [ev] = await m.clientEvents();
    expect(ev.event).toEqual({
      type: "update_message_flags",
      op: "remove",
      operation: "remove",
      flag: "read",
      messages: [old],
      all: false,
      message_details: { [String(old)]: { type: "stream", stream_id: channel, topic: "past", unmuted_stream_msg: true } },
    });
    expect(ev.users).toEqual([org.member.user_id]);
    expect(await flagsOf(org.member, old)).toEqual(["historical"]);
    const unread = await unreadMsgs(org.member);
    expect(unread.count).toBe(1);
    expect(unread.streams).toEqual([{ stream_id: channel, topic: "past", unread_message_ids: [old] }]);

    // And read again.
    expect((await m.ok(await flags(org.member, [old], "add", "read"))).messages).toEqual([old]);
    expect(await flagsOf(org.member, old)).toEqual(["read", "historical"]);
    expect((await unreadMsgs(org.member)).count).toBe(0);
    await m.ok(await unsubscribe(org.member, "late-joiners"));
  });

  it("flags/narrow marks a late joiner's older channel messages unread too", async () => {
    await m.createStream(org.owner, "late-narrow", [org.owner]);
    const a = await m.send(org.owner, { type: "stream", to: "late-narrow", topic: "t", content: "a" });
    await m.ok(await subscribe(org.member2, "late-narrow"));
    const b = await m.send(org.owner, { type: "stream", to: "late-narrow", topic: "t", content: "b" });
    await m.ok(await flags(org.member2, [b], "add", "read"));
    await m.outbox();
    const res = await m.ok(await byNarrow(org.member2, { narrow: JSON.stringify([{ operator: "channel", operand: "late-narrow" }]), op: "remove", flag: "read" }));
    expect(res).toMatchObject({ processed_count: 2, updated_count: 2, first_processed_id: a, last_processed_id: b, found_oldest: true, found_newest: true });
    expect((await m.clientEvents()).map((e) => e.event.messages)).toEqual([[a, b]]);
    expect(await flagsOf(org.member2, a)).toEqual(["historical"]);
    expect(await flagsOf(org.member2, b)).toEqual([]);
  });

  it("marking unread in a channel one is not subscribed to changes nothing, writes no row and sends no event", async () => {
    await m.createStream(org.owner, "not-mine", [org.owner]);
    const id = await m.send(org.owner, { type: "stream", to: "not-mine", topic: "t", content: "x" });
    await m.outbox();
    expect((await m.ok(await flags(org.admin, [id], "remove", "read"))).messages).toEqual([]);
    expect(await m.clientEvents()).toEqual([]);
    expect(await flagsOf(org.admin, id)).toEqual(["read", "historical"]);
    const { rows } = await m.deps.pool.query("SELECT 1 FROM usermessages WHERE user_id = $1 AND message_id = $2", [org.admin.user_id, id]);
    expect(rows).toEqual([]);

    // One who left: their message stays read.
    await m.createStream(org.owner, "left", [org.owner, org.member]);
    const got = await m.send(org.owner, { type: "stream", to: "left", topic: "t", content: "y" });
    await m.ok(await flags(org.member, [got], "add", "read"));
    await m.ok(await unsubscribe(org.member, "left"));
    await m.outbox();
    expect((await m.ok(await flags(org.member, [got], "remove", "read"))).messages).toEqual([]);
    expect(await m.clientEvents()).toEqual([]);
    expect(await flagsOf(org.member, got)).toEqual(["read"]);
  });

  it("any flag change on a message read through history puts it in the user's own history, even one that changes nothing shown", async () => {
    // Zulip writes the historical row whatever the change; the row is what the user's combined
    // feed (a fetch without a channel narrow) is made of.
    await m.createStream(org.owner, "browsed", [org.owner]);
    const [read, unstarred, untouched] = [
      await m.send(org.owner, { type: "stream", to: "browsed", topic: "t", content: "read me" }),
      await m.send(org.owner, { type: "stream", to: "browsed", topic: "t", content: "unstar me" }),
      await m.send(org.owner, { type: "stream", to: "browsed", topic: "t", content: "never touched" }),
    ];
    await m.outbox();
    const feed = async () => (await m.ok(await m.call("GET", "/messages", org.moderator, { anchor: "newest", num_before: "100", narrow: "[]" }))).messages;
    expect((await feed()).map((x: { id: number }) => x.id)).not.toContain(read);
    expect((await m.ok(await flags(org.moderator, [read], "add", "read"))).messages).toEqual([]);
    expect((await m.ok(await flags(org.moderator, [unstarred], "remove", "starred"))).messages).toEqual([]);
    expect(await m.clientEvents()).toEqual([]);
    const mine = (await feed()).filter((x: { id: number }) => [read, unstarred, untouched].includes(x.id));
    expect(mine.map((x: { id: number; flags: string[] }) => [x.id, x.flags])).toEqual([
      [read, ["read", "historical"]],
      [unstarred, ["read", "historical"]],
    ]);
  });

  it("a guest cannot flag a public channel's message they never received", async () => {
    await m.createStream(org.owner, "public-no-guests", [org.owner]);
    const id = await m.send(org.owner, { type: "stream", to: "public-no-guests", topic: "t", content: "x" });
    await m.outbox();
    for (const [op, flag] of [["add", "starred"], ["add", "read"]]) {
      expectError(await flags(org.guest, [id], op, flag), 400, "BAD_REQUEST", "Invalid message(s)");
    }
    expect(await m.clientEvents()).toEqual([]);
  });
});

describe("message_details for each conversation kind", () => {
  it("a direct message to oneself has no other users; a group one lists the others, ascending; a mention is marked", async () => {
    const self = await m.send(org.member, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "note to self" });
    const group = await m.send(org.owner, { type: "direct", to: JSON.stringify([org.member2.user_id, org.member.user_id, org.admin.user_id]), content: "hi @**Mel Member**" });
    await m.ok(await flags(org.member, [self, group], "add", "read"));
    await m.outbox();
    expect((await m.ok(await flags(org.member, [group, self], "remove", "read"))).messages).toEqual([self, group]);
    const [ev] = await m.clientEvents();
    const others = [org.owner, org.admin, org.member2].map((u) => u.user_id).sort((a, b) => a - b);
    expect(ev.event.message_details).toEqual({
      [String(self)]: { type: "private", user_ids: [] },
      [String(group)]: { type: "private", user_ids: others, mentioned: true },
    });
    // Register agrees: a direct message to oneself is a one-on-one conversation with oneself.
    const unread = await unreadMsgs(org.member);
    expect(unread.pms).toContainEqual({ other_user_id: org.member.user_id, sender_id: org.member.user_id, unread_message_ids: [self] });
    expect(unread.mentions).toContain(group);
    await m.ok(await flags(org.member, [self, group], "add", "read"));
  });

  it("marking unread a message already unread changes nothing and sends nothing", async () => {
    const id = await m.send(org.owner, { type: "direct", to: JSON.stringify([org.member2.user_id]), content: "still unread" });
    await m.outbox();
    expect((await m.ok(await flags(org.member2, [id], "remove", "read"))).messages).toEqual([]);
    expect((await m.ok(await flags(org.member2, [], "add", "read"))).messages).toEqual([]);
    expect(await m.clientEvents()).toEqual([]);
    await m.ok(await flags(org.member2, [id], "add", "read"));
  });
});

describe("POST /messages/flags/narrow anchors", () => {
  it("first_unread starts at the narrow's first unread message, or the newest when none is", async () => {
    await m.createStream(org.owner, "anchors", [org.owner, org.moderator]);
    const ids: number[] = [];
    for (const content of ["1", "2", "3", "4"]) ids.push(await m.send(org.owner, { type: "stream", to: "anchors", topic: "t", content }));
    await m.ok(await flags(org.moderator, [ids[0], ids[1]], "add", "read"));
    const narrow = JSON.stringify([{ operator: "channel", operand: "anchors" }]);
    const res = await m.ok(await byNarrow(org.moderator, { anchor: "first_unread", num_before: "0", num_after: "1", narrow, op: "add", flag: "read" }));
    expect(res).toMatchObject({ processed_count: 2, updated_count: 2, first_processed_id: ids[2], last_processed_id: ids[3] });
    const none = await m.ok(await byNarrow(org.moderator, { anchor: "first_unread", num_before: "1", num_after: "0", narrow, op: "add", flag: "read" }));
    // Nothing unread left: anchored at the newest message, so one before it is that message alone.
    expect(none).toMatchObject({ processed_count: 1, updated_count: 0, first_processed_id: ids[3], last_processed_id: ids[3], found_newest: true });
  });

  it("the narrow, anchor, counts, op and flag are all required", async () => {
    const full = { anchor: "newest", num_before: "0", num_after: "0", narrow: "[]", op: "add", flag: "read" };
    for (const key of Object.keys(full)) {
      const params: Record<string, unknown> = { ...full };
      delete params[key];
      expectError(await m.call("POST", "/messages/flags/narrow", org.member, params), 400, "REQUEST_VARIABLE_MISSING", `Missing '${key}' argument`);
    }
  });
});

describe("register's unread_msgs", () => {
  it("one's own messages sent through the API start unread and are listed; from an interactive client, read", async () => {
    const o = await m.createOrg();
    const other = await m.createStream(o.owner, "mine", [o.owner, o.member]);
    const api = await m.send(o.member, { type: "direct", to: JSON.stringify([o.owner.user_id]), content: "from a script" });
    const inChannel = await m.send(o.member, { type: "stream", to: "mine", topic: "t", content: "scripted" });
    const web = (await m.ok(await m.call("POST", "/messages", { ...o.member.as, client: "website" }, { type: "direct", to: JSON.stringify([o.owner.user_id]), content: "typed" }))).id;
    expect(await flagsOf(o.member, api)).toEqual([]);
    expect(await flagsOf(o.member, web)).toEqual(["read"]);
    expect(await unreadMsgs(o.member)).toEqual({
      count: 2,
      pms: [{ other_user_id: o.owner.user_id, sender_id: o.owner.user_id, unread_message_ids: [api] }],
      streams: [{ stream_id: other, topic: "t", unread_message_ids: [inChannel] }],
      huddles: [],
      mentions: [],
      old_unreads_missing: false,
    });
  });

  it("a direct mention in a muted topic is listed in mentions but the message does not count", async () => {
    const o = await m.createOrg();
    const quiet = await m.createStream(o.owner, "quiet", [o.owner, o.member]);
    await m.ok(await m.call("POST", "/user_topics", o.member, { stream_id: quiet, topic: "hushed", visibility_policy: 1 }));
    const id = await m.send(o.owner, { type: "stream", to: "quiet", topic: "hushed", content: "@**Mel Member** look" });
    const unread = await unreadMsgs(o.member);
    expect(unread).toMatchObject({ count: 0, mentions: [id], streams: [{ stream_id: quiet, topic: "hushed", unread_message_ids: [id] }] });
  });

  it("a muted user's direct message arrives read; marked unread by hand, it is listed and counted like any other", async () => {
    // Zulip leaves muted senders out of nothing here: their messages are simply read (on arrival,
    // and when the mute starts); one the user marks unread again is unread.
    const o = await m.createOrg();
    // What messaging's consumer does when accounts reports the new mute list.
    await withTx(m.deps.pool, (tx) => doReplicateMutedUsers(tx, o.realmId, o.member.user_id, [o.member2.user_id], 1));
    const id = await m.send(o.member2, { type: "direct", to: JSON.stringify([o.member.user_id]), content: "psst" });
    expect(await flagsOf(o.member, id)).toEqual(["read"]);
    expect((await unreadMsgs(o.member)).count).toBe(0);
    expect((await m.ok(await flags(o.member, [id], "remove", "read"))).messages).toEqual([id]);
    expect(await unreadMsgs(o.member)).toMatchObject({ count: 1, pms: [{ other_user_id: o.member2.user_id, sender_id: o.member2.user_id, unread_message_ids: [id] }] });
  });
});
