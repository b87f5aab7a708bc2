import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

/**
 * Who may read a channel's messages, and what changes when a channel's privacy changes or it is
 * archived, through the requests a client makes (Zulip 9, feature level 267: has_message_access,
 * can_access_stream_history, access_stream_common, do_change_stream_permission,
 * do_deactivate_stream). The neighbouring files (history, channels, channel-settings,
 * subscriptions, role-change) hold the rest.
 */
let m: Messaging;
let org: Org;

type Who = Org["member"];
const fetch = async (who: Who, params: Record<string, unknown>) => m.ok(await m.call("GET", "/messages", who, params));
const idsOf = (res: { messages: Array<{ id: number }> }) => res.messages.map((x) => x.id);
/** A channel's messages as `who` reads them, without the notification bot's notices of the channel's changes. */
const inChannel = async (who: Who, channel: string | number) =>
  idsOf(await fetch(who, { anchor: "newest", num_before: 100, narrow: [{ operator: "channel", operand: channel }, { operator: "topic", operand: "channel events", negated: true }] }));
const search = async (who: Who, text: string, channel?: string) =>
  idsOf(await fetch(who, { anchor: "newest", num_before: 100, narrow: [...(channel === undefined ? [] : [["channel", channel]]), ["search", text]] }));
const invalidMessage = (res: { status: number; body: any }) => expectError(res, 400, "BAD_REQUEST", "Invalid message(s)");
const patch = (who: Who, id: number, params: Record<string, unknown>) => m.call("PATCH", `/streams/${id}`, who, params);
const byId = (a: number, b: number) => a - b;

/**
 * Every way of reaching one message by its id, each refused as a missing message. A copy of one's
 * own still comes back in a fetch by id list (Zulip reads the viewer's rows there), so that is
 * checked only where the viewer has none.
 */
async function expectUnreachable(who: Who, id: number, hasCopy = false) {
  invalidMessage(await m.call("GET", `/messages/${id}`, who));
  invalidMessage(await m.call("GET", `/messages/${id}/history`, who));
  invalidMessage(await m.call("GET", `/messages/${id}/read_receipts`, who));
  invalidMessage(await m.call("POST", `/messages/${id}/reactions`, who, { emoji_name: "smile" }));
  invalidMessage(await m.call("PATCH", `/messages/${id}`, who, { topic: "moved away", propagate_mode: "change_one" }));
  if (!hasCopy) expect(idsOf(await fetch(who, { message_ids: JSON.stringify([id]) }))).toEqual([]);
}

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

describe("a private channel's history", () => {
  it("protected: a new subscriber reads only what was sent after they joined, by every path", async () => {
    const vault = await m.createStream(org.owner, "vault", [org.owner, org.member], { invite_only: true });
    const old = await m.send(org.owner, { type: "stream", to: "vault", topic: "ancient", content: "zeppelin blueprint" });
    await m.createStream(org.owner, "vault", [org.member2, org.admin]);
    const fresh = await m.send(org.member, { type: "stream", to: "vault", topic: "recent", content: "zeppelin launch" });

    for (const who of [org.member2, org.admin]) {
      expect(await inChannel(who, "vault")).toEqual([fresh]);
      expect(await inChannel(who, vault)).toEqual([fresh]);
      expect(await search(who, "zeppelin")).toEqual([fresh]);
      expect(await search(who, "zeppelin", "vault")).toEqual([fresh]);
      await expectUnreachable(who, old);
      const topics = (await m.ok(await m.call("GET", `/users/me/${vault}/topics`, who))).topics;
      expect(topics.map((t: { name: string }) => t.name)).toEqual(["recent"]);
    }
    // Nor may the administrator, subscribed late, move the topic or delete the old message.
    invalidMessage(await m.call("PATCH", `/messages/${old}`, org.admin, { topic: "moved", propagate_mode: "change_all" }));
    invalidMessage(await m.call("DELETE", `/messages/${old}`, org.admin));
    expect((await m.ok(await m.call("GET", `/messages/${old}`, org.member))).message.subject).toBe("ancient");
    expect(await inChannel(org.member, "vault")).toEqual([old, fresh]);

    // Shared history from now on: the late subscribers read the older message too.
    await m.ok(await patch(org.owner, vault, { history_public_to_subscribers: true }));
    expect(await inChannel(org.member2, "vault")).toEqual([old, fresh]);
    expect(await search(org.member2, "zeppelin", "vault")).toEqual([old, fresh]);
    // A search without the channel reads only what one received, as in Zulip.
    expect(await search(org.member2, "zeppelin")).toEqual([fresh]);
    const got = await m.ok(await m.call("GET", `/messages/${old}`, org.member2));
    expect(got.message.flags).toEqual(["read", "historical"]);
    await m.ok(await m.call("POST", `/messages/${old}/reactions`, org.member2, { emoji_name: "smile" }));
    expect(idsOf(await fetch(org.member2, { message_ids: JSON.stringify([old]) }))).toEqual([old]);

    // And protected again: only what they hold a copy of (the reaction gave member2 one).
    await m.ok(await patch(org.owner, vault, { history_public_to_subscribers: false }));
    expect(await inChannel(org.member2, "vault")).toEqual([old, fresh]);
    expect(await inChannel(org.admin, "vault")).toEqual([fresh]);
    invalidMessage(await m.call("GET", `/messages/${old}`, org.admin));
  });

  it("an administrator who is not subscribed sees the channel and its subscribers, never its messages", async () => {
    const den = await m.createStream(org.member, "den", [org.member, org.member2], { invite_only: true, history_public_to_subscribers: true });
    const msg = await m.send(org.member, { type: "stream", to: "den", topic: "t", content: "between us" });
    const listed = (await m.ok(await m.call("GET", "/streams", org.admin, { include_all_active: true }))).streams;
    expect(listed.map((s: { stream_id: number }) => s.stream_id)).toContain(den);
    expect((await m.ok(await m.call("GET", `/streams/${den}`, org.admin))).stream).toMatchObject({ name: "den", invite_only: true });
    expect((await m.ok(await m.call("GET", `/streams/${den}/members`, org.admin))).subscribers).toEqual([org.member.user_id, org.member2.user_id].sort(byId));
    expect((await m.ok(await m.call("GET", "/get_stream_id", org.admin, { stream: "den" }))).stream_id).toBe(den);
    // The plain channel list has only what the administrator is in or may join.
    expect((await m.ok(await m.call("GET", "/streams", org.admin))).streams.map((s: { stream_id: number }) => s.stream_id)).not.toContain(den);

    expect(await inChannel(org.admin, "den")).toEqual([]);
    expect(await search(org.admin, "between")).toEqual([]);
    await expectUnreachable(org.admin, msg);
    invalidMessage(await m.call("DELETE", `/messages/${msg}`, org.admin));
    expectError(await m.call("GET", `/users/me/${den}/topics`, org.admin), 400, "BAD_REQUEST", "Invalid channel ID");
    // A member outside it learns nothing.
    expectError(await m.call("GET", `/streams/${den}`, org.moderator), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("GET", `/streams/${den}/members`, org.moderator), 400, "BAD_REQUEST", "Invalid channel ID");
  });

  it("one who left keeps what they received in their narrows, but no longer reaches it by id (Zulip: a copy and a subscription)", async () => {
    for (const shared of [false, true]) {
      const name = `exit-${shared}`;
      await m.createStream(org.owner, name, [org.owner, org.member2], { invite_only: true, history_public_to_subscribers: shared });
      const msg = await m.send(org.member2, { type: "stream", to: name, topic: "t", content: "written before leaving" });
      expect((await m.ok(await m.call("GET", `/messages/${msg}`, org.member2))).message.id).toBe(msg);
      await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.member2, { subscriptions: JSON.stringify([name]) }));
      expect(await inChannel(org.member2, name)).toEqual([msg]);
      await expectUnreachable(org.member2, msg, true);
      invalidMessage(await m.call("PATCH", `/messages/${msg}`, org.member2, { content: "edited after leaving" }));
      // Back in, they reach it again.
      await m.createStream(org.owner, name, [org.member2]);
      expect((await m.ok(await m.call("GET", `/messages/${msg}`, org.member2))).message.id).toBe(msg);
    }
  });
});

describe("public and web-public channels", () => {
  it("a member not subscribed reads a public channel's history through a channel narrow; history_limited is false", async () => {
    await m.createStream(org.owner, "square", [org.owner]);
    const msg = await m.send(org.owner, { type: "stream", to: "square", topic: "t", content: "town crier" });
    const res = await fetch(org.member, { anchor: "newest", num_before: 10, narrow: [["channel", "square"]] });
    expect(idsOf(res)).toEqual([msg]);
    expect(res.history_limited).toBe(false);
    expect((await m.ok(await m.call("GET", `/messages/${msg}`, org.member))).message.flags).toEqual(["read", "historical"]);
    expect(await search(org.member, "crier")).toEqual([]);
  });

  it("a guest sees only the channels it is in: never a public one it is not in", async () => {
    const plaza = await m.createStream(org.owner, "plaza", [org.owner]);
    const msg = await m.send(org.owner, { type: "stream", to: "plaza", topic: "t", content: "members only chatter" });
    const listed = async (params: Record<string, unknown>) => (await m.ok(await m.call("GET", "/streams", org.guest, params))).streams.map((s: { stream_id: number }) => s.stream_id);
    expect(await listed({})).not.toContain(plaza);
    expect(await listed({ include_public: true, include_web_public: true })).not.toContain(plaza);
    expectError(await m.call("GET", "/streams", org.guest, { include_all_active: true }), 400, "BAD_REQUEST", "User not authorized for this query");
    expectError(await m.call("GET", `/streams/${plaza}`, org.guest), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("GET", "/get_stream_id", org.guest, { stream: "plaza" }), 400, "BAD_REQUEST", "Invalid channel name 'plaza'");
    expectError(await m.call("GET", `/streams/${plaza}/members`, org.guest), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("GET", "/messages", org.guest, { anchor: "newest", narrow: JSON.stringify([["channel", "plaza"]]) }), 400, "BAD_NARROW");
    await expectUnreachable(org.guest, msg);
    // Nor may it subscribe itself.
    expectError(await m.call("POST", "/users/me/subscriptions", org.guest, { subscriptions: JSON.stringify([{ name: "plaza" }]) }), 400, "BAD_REQUEST", "Unable to access channel (plaza).");

    // Subscribed by someone else, it reads the channel's history; removed again, it loses it all by id.
    await m.createStream(org.owner, "plaza", [org.guest]);
    expect(await inChannel(org.guest, "plaza")).toEqual([msg]);
    const later = await m.send(org.owner, { type: "stream", to: "plaza", topic: "t", content: "welcome guest" });
    expect((await m.ok(await m.call("GET", `/messages/${later}`, org.guest))).message.flags).toEqual([]);
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.owner, { subscriptions: JSON.stringify(["plaza"]), principals: JSON.stringify([org.guest.user_id]) }));
    invalidMessage(await m.call("GET", `/messages/${later}`, org.guest));
    expect(await listed({})).not.toContain(plaza);
  });

  it("web-public: any user of the organization, guests too, reads it and may list it with include_web_public", async () => {
    await m.setRealmSetting(org.realmId, "enable_spectator_access", true);
    const stage = await m.createStream(org.owner, "stage", [org.owner]);
    await m.ok(await patch(org.owner, stage, { is_web_public: true }));
    const msg = await m.send(org.owner, { type: "stream", to: "stage", topic: "t", content: "open rehearsal" });
    const listed = async (params: Record<string, unknown>) => (await m.ok(await m.call("GET", "/streams", org.guest, params))).streams.map((s: { stream_id: number }) => s.stream_id);
    expect(await listed({})).not.toContain(stage);
    expect(await listed({ include_web_public: true })).toContain(stage);
    expect((await m.ok(await m.call("GET", `/streams/${stage}`, org.guest))).stream).toMatchObject({ is_web_public: true });
    expect(await inChannel(org.guest, "stage")).toEqual([msg]);
    expect(idsOf(await fetch(org.guest, { anchor: "newest", num_before: 10, narrow: [["channels", "web-public"], ["stream", "stage"], ["topic", "t"]] }))).toEqual([msg]);
    await m.setRealmSetting(org.realmId, "enable_spectator_access", false);
  });
});

describe("changing a channel's privacy", () => {
  it("only administrators; the notification bot tells the channel the old and new access", async () => {
    const id = await m.createStream(org.owner, "policy-room", [org.owner, org.moderator]);
    await m.outbox();
    for (const params of [{ is_private: true }, { history_public_to_subscribers: true }, { is_web_public: true }]) {
      expectError(await patch(org.moderator, id, params), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    }
    expect(await m.clientEvents()).toEqual([]);
    await m.ok(await patch(org.admin, id, { is_private: true }));
    const steps: Array<[Record<string, unknown>, string]> = [
      [{ history_public_to_subscribers: true }, "from **Private, protected history** to **Private, shared history**"],
      [{ is_private: false }, "from **Private, shared history** to **Public**"],
    ];
    await m.createStream(org.owner, "policy-room", [org.admin]);
    for (const [params, words] of steps) {
      await m.ok(await patch(org.admin, id, params));
      const [last] = idsOf(await fetch(org.owner, { anchor: "newest", num_before: 1, narrow: [["channel", "policy-room"]] }));
      const notice = (await m.ok(await m.call("GET", `/messages/${last}`, org.owner, { apply_markdown: false }))).message;
      expect(notice).toMatchObject({ subject: "channel events", sender_email: expect.stringContaining("notification-bot") });
      expect(notice.content).toBe(`@_**Adam Admin|${org.admin.user_id}** changed the [access permissions](/help/channel-permissions) for this channel ${words}.`);
    }
  });

  it("public to private: the subscribers and administrators get the update; the others a delete, and lose its history", async () => {
    const id = await m.createStream(org.owner, "going-dark", [org.owner, org.member]);
    const msg = await m.send(org.owner, { type: "stream", to: "going-dark", topic: "t", content: "last public word" });
    expect(await inChannel(org.member2, "going-dark")).toEqual([msg]);
    await m.outbox();
    await m.ok(await patch(org.owner, id, { is_private: true }));
    const events = (await m.clientEvents()).filter((e) => e.event.type === "stream" && e.event.property !== "first_message_id");
    expect(events.map((e) => e.event.op)).toEqual(["update", "delete"]);
    expect(events[0].users).toEqual([org.owner, org.admin, org.member].map((u) => u.user_id).sort(byId));
    expect(events[0].event).toMatchObject({ property: "invite_only", value: true, history_public_to_subscribers: false, is_web_public: false });
    expect(events[1].users).toEqual([org.moderator, org.member2, org.bot].map((u) => u.user_id).sort(byId));
    expectError(await m.call("GET", "/messages", org.member2, { anchor: "newest", narrow: JSON.stringify([["channel", "going-dark"]]) }), 400, "BAD_NARROW");
    invalidMessage(await m.call("GET", `/messages/${msg}`, org.member2));
    // The subscriber keeps what it received.
    expect(await inChannel(org.member, "going-dark")).toEqual([msg]);
  });
});

describe("archiving a channel (DELETE /streams/{stream_id})", () => {
  it("its messages are out of reach by id, even for those who received them; what was unread leaves register's unread counts", async () => {
    const id = await m.createStream(org.owner, "attic", [org.owner, org.member, org.guest]);
    const msg = await m.send(org.owner, { type: "stream", to: "attic", topic: "boxes", content: "dusty boxes" });
    const unread = async (who: Who) =>
      (await m.ok(await m.call("POST", "/internal/register_state/messaging", who, { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) }))).unread_msgs;
    const before = await unread(org.member);
    expect(before.streams.some((s: { stream_id: number }) => s.stream_id === id)).toBe(true);
    await m.outbox();
    await m.ok(await m.call("DELETE", `/streams/${id}`, org.admin));
    const events = await m.clientEvents();
    // One stream delete to everyone who saw it; no subscription remove (clients drop the subscription on the delete).
    expect(events.map((e) => [e.event.type, e.event.op])).toEqual([["stream", "delete"]]);
    expect(events[0].users).toContain(org.guest.user_id);
    const after = await unread(org.member);
    expect(after.streams.some((s: { stream_id: number }) => s.stream_id === id)).toBe(false);
    expect(after.count).toBe(before.count - 1);
    for (const who of [org.owner, org.member, org.guest]) await expectUnreachable(who, msg, true);
    // The name is free, its old one is not reachable, and it no longer counts among the subscriptions.
    expectError(await m.call("GET", "/get_stream_id", org.member, { stream: "attic" }), 400, "BAD_REQUEST", "Invalid channel name 'attic'");
    const subs = await m.ok(await m.call("POST", "/internal/register_state/messaging", org.member, { fetch_event_types: JSON.stringify(["subscription"]) }));
    for (const list of [subs.subscriptions, subs.unsubscribed, subs.never_subscribed]) expect(list.map((s: { stream_id: number }) => s.stream_id)).not.toContain(id);
  });
});

describe("GET /streams parameters", () => {
  it("each include_ flag adds its channels; include_all_active is for administrators; bad values are refused", async () => {
    await m.setRealmSetting(org.realmId, "enable_spectator_access", true);
    const pub = await m.createStream(org.owner, "gs-public", [org.owner]);
    const web = await m.createStream(org.owner, "gs-web", [org.owner]);
    await m.ok(await patch(org.owner, web, { is_web_public: true }));
    const mine = await m.createStream(org.owner, "gs-mine", [org.owner, org.member], { invite_only: true });
    const hidden = await m.createStream(org.owner, "gs-hidden", [org.owner], { invite_only: true });
    await m.ok(await m.call("POST", "/default_streams", org.owner, { stream_id: pub }));
    const ids = async (who: Who, params: Record<string, unknown>) => {
      const all = (await m.ok(await m.call("GET", "/streams", who, params))).streams as Array<{ stream_id: number; is_default?: boolean }>;
      return all.filter((s) => [pub, web, mine, hidden].includes(s.stream_id));
    };
    const just = (list: Array<{ stream_id: number }>) => list.map((s) => s.stream_id).sort(byId);
    expect(just(await ids(org.member, {}))).toEqual([pub, web, mine].sort(byId));
    expect(just(await ids(org.member, { include_public: false }))).toEqual([mine]);
    expect(just(await ids(org.member, { include_public: false, include_subscribed: false }))).toEqual([]);
    expect(just(await ids(org.member, { include_public: false, include_subscribed: false, include_web_public: true }))).toEqual([web]);
    expect(just(await ids(org.admin, { include_all_active: true }))).toEqual([pub, web, mine, hidden].sort(byId));
    expectError(await m.call("GET", "/streams", org.member, { include_all_active: true }), 400, "BAD_REQUEST", "User not authorized for this query");
    const withDefault = await ids(org.member, { include_default: true });
    expect(withDefault.map((s) => [s.stream_id, s.is_default]).sort((a, b) => byId(a[0] as number, b[0] as number))).toEqual(
      [[pub, true], [web, false], [mine, false]].sort((a, b) => byId(a[0] as number, b[0] as number)),
    );
    expect((await ids(org.member, {})).every((s) => !("is_default" in s))).toBe(true);
    expectError(await m.call("GET", "/streams", org.member, { include_public: "1" }), 400, "BAD_REQUEST", "include_public is not a boolean");
    expectError(await m.call("GET", "/streams", org.member, { include_public: "yes" }), 400, "BAD_REQUEST", "include_public is not valid JSON");
    await m.setRealmSetting(org.realmId, "enable_spectator_access", false);
  });
});
