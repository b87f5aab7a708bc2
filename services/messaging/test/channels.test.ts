import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let other: Org;
let general: number;
let hush: number;
let theirs: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member, org.guest]);
  hush = await m.createStream(org.member, "hush", [org.member, org.bot], { invite_only: true });
  theirs = await m.createStream(other.owner, "theirs", [other.owner]);
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

describe("GET /streams/{stream_id}/members", () => {
  it("lists the active subscribers to whoever may see the channel", async () => {
    expect(await m.ok(await m.call("GET", `/streams/${general}/members`, org.member2))).toEqual({
      result: "success",
      msg: "",
      subscribers: [org.owner.user_id, org.member.user_id, org.guest.user_id],
    });
    // A guest sees the members of a channel they are in; administrators those of a private one.
    expect((await m.ok(await m.call("GET", `/streams/${general}/members`, org.guest))).subscribers).toHaveLength(3);
    expect((await m.ok(await m.call("GET", `/streams/${hush}/members`, org.admin))).subscribers).toEqual([org.member.user_id, org.bot.user_id]);
  });

  it("a private channel one is not in, another organization's or a missing one is `Invalid channel ID`", async () => {
    for (const id of [hush, theirs, 999999]) expectError(await m.call("GET", `/streams/${id}/members`, org.member2), 400, "BAD_REQUEST", "Invalid channel ID");
    const lobby = await m.createStream(org.owner, "lobby", [org.owner]);
    expectError(await m.call("GET", `/streams/${lobby}/members`, org.guest), 400, "BAD_REQUEST", "Invalid channel ID");
  });
});

describe("GET /streams/{stream_id}/email_address", () => {
  it("is empty (no email gateway here) for a channel the caller may access, and `Invalid channel ID` for any other", async () => {
    expect(await m.ok(await m.call("GET", `/streams/${general}/email_address`, org.member2))).toEqual({ result: "success", msg: "", email: "" });
    expect((await m.ok(await m.call("GET", `/streams/${hush}/email_address`, org.member))).email).toBe("");
    for (const id of [hush, theirs, 999999]) expectError(await m.call("GET", `/streams/${id}/email_address`, org.member2), 400, "BAD_REQUEST", "Invalid channel ID");
  });
});

describe("GET /users/{user_id}/subscriptions/{stream_id}", () => {
  const status = (who: Org["member"], userId: number, streamId: number) => m.call("GET", `/users/${userId}/subscriptions/${streamId}`, who);

  it("says whether the user is subscribed", async () => {
    expect(await m.ok(await status(org.member2, org.member.user_id, general))).toEqual({ result: "success", msg: "", is_subscribed: true });
    expect((await m.ok(await status(org.member2, org.member2.user_id, general))).is_subscribed).toBe(false);
    expect((await m.ok(await status(org.admin, org.member.user_id, hush))).is_subscribed).toBe(true);
    expect((await m.ok(await status(org.member, org.member2.user_id, hush))).is_subscribed).toBe(false);
  });

  it("checks the user first, then the channel", async () => {
    expectError(await status(org.member, 999999, 999999), 400, "BAD_REQUEST", "No such user");
    expectError(await status(org.member, other.member.user_id, general), 400, "BAD_REQUEST", "No such user");
    // Zulip's access_user_by_id leaves bots out by default.
    expectError(await status(org.member, org.bot.user_id, hush), 400, "BAD_REQUEST", "No such user");
    expectError(await status(org.member2, org.member.user_id, hush), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await status(org.member, org.member.user_id, theirs), 400, "BAD_REQUEST", "Invalid channel ID");
    const gone = await org.extra(1);
    await m.ok(await m.call("GET", `/users/${gone.user_id}/subscriptions/${general}`, org.member));
    await m.deactivate(gone);
    // The replica learns of the deactivation from accounts' events; here we refresh it as the consumer would.
    await m.deps.pool.query("UPDATE users SET is_active = false WHERE user_id = $1", [gone.user_id]);
    expectError(await status(org.member, gone.user_id, general), 400, "BAD_REQUEST", "User is deactivated");
  });
});

describe("DELETE /streams/{stream_id}", () => {
  it("administrators only; a missing, hidden or other organization's channel is `Invalid channel ID`", async () => {
    expectError(await m.call("DELETE", `/streams/${general}`, org.moderator), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await m.call("DELETE", `/streams/${theirs}`, org.admin), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("DELETE", "/streams/999999", org.admin), 400, "BAD_REQUEST", "Invalid channel ID");
    expect(await m.clientEvents()).toEqual([]);
  });

  it("ends the channel: a stream delete to everyone who could see it, its name free again, its unread read", async () => {
    const doomed = await m.createStream(org.owner, "doomed", [org.owner, org.member2, org.guest]);
    const msg = await m.send(org.owner, { type: "stream", to: "doomed", topic: "t", content: "last words" });
    await m.outbox();
    expect(await m.ok(await m.call("DELETE", `/streams/${doomed}`, org.admin))).toEqual({ result: "success", msg: "" });
    const events = await m.clientEvents();
    expect(events.map((e) => e.type)).toEqual(["messaging.stream.deleted"]);
    expect(events[0].event).toMatchObject({ type: "stream", op: "delete", streams: [{ stream_id: doomed, name: "doomed", invite_only: false }] });
    // Non-guests see a public channel; the guest was subscribed.
    for (const u of [org.owner, org.admin, org.member, org.member2, org.guest]) expect(events[0].users).toContain(u.user_id);

    expect((await m.ok(await m.call("GET", "/streams", org.admin, { include_all_active: true }))).streams.map((s: any) => s.stream_id)).not.toContain(doomed);
    expect((await m.ok(await m.call("GET", "/users/me/subscriptions", org.member2))).subscriptions.map((s: any) => s.stream_id)).not.toContain(doomed);
    expectError(await m.call("GET", `/streams/${doomed}`, org.admin), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("GET", "/get_stream_id", org.owner, { stream: "doomed" }), 400, "BAD_REQUEST", "Invalid channel name 'doomed'");
    expectError(await m.call("DELETE", `/streams/${doomed}`, org.admin), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("POST", "/messages", org.owner, { type: "stream", to: doomed, topic: "t", content: "anyone?" }), 400, "STREAM_DOES_NOT_EXIST");
    // An invitation naming it no longer subscribes anyone to it.
    const joiner = await org.extra(7);
    expect((await m.ok(await m.call("POST", "/internal/subscriptions/new_user", null, { realm_id: org.realmId, user_id: joiner.user_id, stream_ids: [doomed] }))).stream_ids).toEqual([]);
    const unread = await m.deps.pool.query("SELECT user_id FROM usermessages WHERE message_id = $1 AND (flags & 1) = 0", [msg]);
    expect(unread.rows).toEqual([]);

    // The name can be used again, by a new channel.
    const reborn = await m.createStream(org.owner, "doomed", [org.owner]);
    expect(reborn).not.toBe(doomed);
    await m.ok(await m.call("POST", "/messages", org.owner, { type: "stream", to: "doomed", topic: "t", content: "hello again" }));
  });

  it("a private channel's delete goes to its subscribers and the administrators only", async () => {
    const quiet = await m.createStream(org.member, "quiet", [org.member], { invite_only: true });
    await m.outbox();
    await m.ok(await m.call("DELETE", `/streams/${quiet}`, org.owner));
    const [deleted] = await m.clientEvents();
    expect(deleted.event.streams[0]).toMatchObject({ name: "quiet", invite_only: true });
    expect([...deleted.users].sort((a: number, b: number) => a - b)).toEqual([org.owner, org.admin, org.member].map((u) => u.user_id).sort((a, b) => a - b));
  });
});

describe("default channels", () => {
  const defaults = async (who: Org["member"]) =>
    ((await m.ok(await m.call("GET", "/streams", who, { include_default: true }))).streams as any[]).filter((s) => s.is_default).map((s) => s.name);

  it("POST and DELETE /default_streams: administrators, public channels; a default_streams event with the whole list to non-guests", async () => {
    const lobby = await m.createStream(org.owner, "welcome", [org.owner]);
    await m.outbox();
    expect(await m.ok(await m.call("POST", "/default_streams", org.admin, { stream_id: lobby }))).toEqual({ result: "success", msg: "" });
    const [event] = await m.clientEvents();
    expect(event.type).toBe("messaging.default_streams.updated");
    expect(event.event).toEqual({ type: "default_streams", default_streams: [expect.objectContaining({ stream_id: lobby, name: "welcome", invite_only: false })] });
    expect(event.users).toContain(org.member.user_id);
    expect(event.users).not.toContain(org.guest.user_id);
    expect(await defaults(org.member)).toEqual(["welcome"]);
    // Adding it again changes nothing and says nothing.
    await m.ok(await m.call("POST", "/default_streams", org.admin, { stream_id: lobby }));
    expect(await m.clientEvents()).toEqual([]);

    // Register lists them for members, not for guests.
    const registered = async (who: Org["member"]) =>
      m.ok(await m.call("POST", "/internal/register_state/messaging", who, { fetch_event_types: JSON.stringify(["default_streams", "default_stream_groups"]) }));
    expect(await registered(org.member)).toMatchObject({
      realm_default_streams: [expect.objectContaining({ stream_id: lobby, name: "welcome" })],
      realm_default_stream_groups: [],
    });
    expect((await registered(org.guest)).realm_default_streams).toEqual([]);

    await m.ok(await m.call("DELETE", "/default_streams", org.owner, { stream_id: lobby }));
    expect((await m.clientEvents()).map((e) => e.event)).toEqual([{ type: "default_streams", default_streams: [] }]);
    expect((await registered(org.member)).realm_default_streams).toEqual([]);
    expect(await defaults(org.member)).toEqual([]);
    await m.ok(await m.call("DELETE", "/default_streams", org.owner, { stream_id: lobby }));
    expect(await m.clientEvents()).toEqual([]);
  });

  it("refuses non-administrators, private and unknown channels", async () => {
    expectError(await m.call("POST", "/default_streams", org.moderator, { stream_id: general }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await m.call("DELETE", "/default_streams", org.member, { stream_id: general }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    // An administrator not in a private channel cannot reach it here; one who is, is told why not.
    expectError(await m.call("POST", "/default_streams", org.admin, { stream_id: hush }), 400, "BAD_REQUEST", "Invalid channel ID");
    const inner = await m.createStream(org.admin, "inner", [org.admin], { invite_only: true });
    await m.outbox();
    expectError(await m.call("POST", "/default_streams", org.admin, { stream_id: inner }), 400, "BAD_REQUEST", "Private channels cannot be made default.");
    expectError(await m.call("POST", "/default_streams", org.admin, { stream_id: theirs }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("POST", "/default_streams", org.admin, {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'stream_id' argument");
    expect(await m.clientEvents()).toEqual([]);
  });

  it("is_default_stream on channel creation: administrators only, never private", async () => {
    const sub = (who: Org["member"], params: Record<string, unknown>) => m.call("POST", "/users/me/subscriptions", who, params);
    expectError(await sub(org.member, { subscriptions: JSON.stringify([{ name: "made-default" }]), is_default_stream: true }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await sub(org.admin, { subscriptions: JSON.stringify([{ name: "made-default" }]), is_default_stream: true, invite_only: true }), 400, "BAD_REQUEST", "A default channel cannot be private.");
    await m.ok(await sub(org.admin, { subscriptions: JSON.stringify([{ name: "made-default" }, { name: "general" }]), is_default_stream: true }));
    // Only the channel it created becomes a default one; the event comes after the channel's creation.
    const types = (await m.clientEvents()).map((e) => e.type);
    expect(types.indexOf("messaging.stream.created")).toBeLessThan(types.indexOf("messaging.default_streams.updated"));
    expect(await defaults(org.member)).toEqual(["made-default"]);
  });

  it("a new user joins them with include_default; deleting a default channel removes it from the list", async () => {
    const joiner = await org.extra(8);
    const res = await m.ok(await m.call("POST", "/internal/subscriptions/new_user", null, { realm_id: org.realmId, user_id: joiner.user_id, stream_ids: [], include_default: true }));
    const id = (await m.ok(await m.call("GET", "/get_stream_id", org.admin, { stream: "made-default" }))).stream_id;
    expect(res.stream_ids).toEqual([id]);
    await m.outbox();
    await m.ok(await m.call("DELETE", `/streams/${id}`, org.admin));
    const events = await m.clientEvents();
    expect(events.map((e) => e.event.type)).toEqual(["default_streams", "stream"]);
    expect(events[0].event.default_streams).toEqual([]);
    expect(await defaults(org.member)).toEqual([]);
  });
});

describe("POST /streams/{stream_id}/delete_topic", () => {
  it("deletes the topic's messages (any case of its name), newest first, with a delete_message event carrying message_ids", async () => {
    const a = await m.send(org.owner, { type: "stream", to: "general", topic: "Doomed topic", content: "one" });
    const b = await m.send(org.member, { type: "stream", to: "general", topic: "doomed TOPIC", content: "two" });
    const keep = await m.send(org.member, { type: "stream", to: "general", topic: "kept", content: "three" });
    await m.outbox();
    expect(await m.ok(await m.call("POST", `/streams/${general}/delete_topic`, org.admin, { topic_name: "doomed topic" }))).toEqual({ result: "success", msg: "", complete: true });
    const events = await m.clientEvents();
    const deleted = events.find((e) => e.type === "messaging.topic.messages_deleted")!;
    expect(deleted.event).toEqual({ type: "delete_message", message_type: "stream", message_ids: [b, a], stream_id: general, topic: "doomed TOPIC" });
    expect(deleted.users).toEqual(expect.arrayContaining([org.owner.user_id, org.member.user_id]));
    const left = await m.ok(await m.call("GET", "/messages", org.owner, { anchor: "newest", num_before: 100, num_after: 0, narrow: JSON.stringify([{ operator: "channel", operand: general }]) }));
    expect(left.messages.map((x: { id: number }) => x.id)).toContain(keep);
    expect(left.messages.map((x: { id: number }) => x.id)).not.toContain(a);
    // Nothing left: still complete.
    expect((await m.ok(await m.call("POST", `/streams/${general}/delete_topic`, org.admin, { topic_name: "doomed topic" }))).complete).toBe(true);
  });

  it("administrators only, in a channel they can access", async () => {
    expectError(await m.call("POST", `/streams/${general}/delete_topic`, org.moderator, { topic_name: "kept" }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await m.call("POST", `/streams/${hush}/delete_topic`, org.admin, { topic_name: "kept" }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("POST", `/streams/${theirs}/delete_topic`, org.admin, { topic_name: "kept" }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("POST", `/streams/${general}/delete_topic`, org.admin, {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'topic_name' argument");
  });

  it("with protected history, only the messages the administrator received", async () => {
    const vault = await m.createStream(org.member, "vault", [org.member], { invite_only: true });
    const before = await m.send(org.member, { type: "stream", to: "vault", topic: "t", content: "before the admin came" });
    await m.ok(await m.call("POST", "/users/me/subscriptions", org.member, { subscriptions: JSON.stringify([{ name: "vault" }]), principals: JSON.stringify([org.admin.user_id]) }));
    const after = await m.send(org.member, { type: "stream", to: "vault", topic: "t", content: "after" });
    await m.outbox();
    await m.ok(await m.call("POST", `/streams/${vault}/delete_topic`, org.admin, { topic_name: "t" }));
    const [deleted] = (await m.clientEvents()).filter((e) => e.type === "messaging.topic.messages_deleted");
    expect(deleted.event.message_ids).toEqual([after]);
    expect((await m.ok(await m.call("GET", `/messages/${before}`, org.member))).message.id).toBe(before);
  });
});
