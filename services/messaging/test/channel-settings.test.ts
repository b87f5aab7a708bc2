import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let other: Org;
let theirs: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  theirs = await m.createStream(other.owner, "theirs", [other.owner]);
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

const patch = (who: Org["member"], id: number, params: Record<string, unknown>) => m.call("PATCH", `/streams/${id}`, who, params);
const stream = async (id: number) => (await m.ok(await m.call("GET", `/streams/${id}`, org.owner))).stream;
const byId = (a: number, b: number) => a - b;
/** The client events without the notification bot's notices in the channel (notification-bot-e2e.test.ts checks them). */
/** The events of a change, without its notice in the channel (and the first_message_id update when that notice is the channel's first message). */
const settingEvents = async () =>
  (await m.clientEvents()).filter((e) => e.type !== "messaging.message.sent" && e.event.property !== "first_message_id");

describe("PATCH /streams/{stream_id}", () => {
  it("description (newlines become spaces) and name: an update event each, to everyone who sees the channel", async () => {
    const id = await m.createStream(org.owner, "plaza", [org.owner, org.guest]);
    await m.outbox();
    expect(await m.ok(await patch(org.admin, id, { description: "Sun *and*\nshade", new_name: "Piazza" }))).toEqual({ result: "success", msg: "" });
    const events = await settingEvents();
    expect(events.map((e) => e.event)).toEqual([
      { type: "stream", op: "update", stream_id: id, name: "plaza", property: "description", value: "Sun *and* shade", rendered_description: "<p>Sun <em>and</em> shade</p>" },
      { type: "stream", op: "update", stream_id: id, name: "plaza", property: "name", value: "Piazza" },
    ]);
    // Non-guests see a public channel, and so does the subscribed guest.
    expect(events[0].users).toEqual([org.owner, org.admin, org.moderator, org.member, org.member2, org.guest, org.bot].map((u) => u.user_id).sort(byId));
    expect(await stream(id)).toMatchObject({ name: "Piazza", description: "Sun *and* shade", rendered_description: "<p>Sun <em>and</em> shade</p>" });
    expect((await m.ok(await m.call("GET", "/get_stream_id", org.member, { stream: "piazza" }))).stream_id).toBe(id);
  });

  it("name checks: unchanged, taken, invalid; a change of case only is allowed", async () => {
    const id = await m.createStream(org.owner, "names", [org.owner]);
    await m.createStream(org.owner, "taken", [org.owner]);
    await m.outbox();
    expectError(await patch(org.admin, id, { new_name: " names " }), 400, "BAD_REQUEST", "Channel already has that name!");
    expectError(await patch(org.admin, id, { new_name: "TAKEN" }), 400, "BAD_REQUEST", "Channel name already in use.");
    expectError(await patch(org.admin, id, { new_name: "   " }), 400, "BAD_REQUEST", "Channel name can't be empty.");
    expectError(await patch(org.admin, id, { new_name: "x".repeat(61) }), 400, "BAD_REQUEST", "Channel name too long (limit: 60 characters).");
    expectError(await patch(org.admin, id, { description: "d".repeat(1025) }), 400, "BAD_REQUEST", "description is too long (limit: 1024 characters)");
    expect(await m.clientEvents()).toEqual([]);
    await m.ok(await patch(org.admin, id, { new_name: "Names" }));
    expect((await stream(id)).name).toBe("Names");
  });

  it("administrators only; a private channel stays hidden from others", async () => {
    const pub = await m.createStream(org.owner, "open-door", [org.owner, org.member]);
    const priv = await m.createStream(org.admin, "closed-door", [org.admin], { invite_only: true });
    await m.outbox();
    expectError(await patch(org.member, pub, { description: "x" }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await patch(org.moderator, priv, { description: "x" }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await patch(org.admin, theirs, { description: "x" }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await patch(org.admin, 999999, { description: "x" }), 400, "BAD_REQUEST", "Invalid channel ID");
    // An administrator not in a private channel may edit its description, not its privacy.
    await m.ok(await patch(org.owner, priv, { description: "members only" }));
    expectError(await patch(org.owner, priv, { is_private: false }), 400, "BAD_REQUEST", "Invalid channel ID");
    const [update] = await m.clientEvents();
    expect(update.users).toEqual([org.owner, org.admin].map((u) => u.user_id).sort(byId));
  });

  it("stream_post_policy, with the legacy is_announcement_only event; is_announcement_only sets it too", async () => {
    const id = await m.createStream(org.owner, "news", [org.owner]);
    await m.outbox();
    await m.ok(await patch(org.admin, id, { stream_post_policy: 2 }));
    expect((await settingEvents()).map((e) => [e.event.property, e.event.value])).toEqual([
      ["stream_post_policy", 2],
      ["is_announcement_only", true],
    ]);
    await m.ok(await patch(org.admin, id, { is_announcement_only: false, stream_post_policy: 4 }));
    expect(await stream(id)).toMatchObject({ stream_post_policy: 1, is_announcement_only: false });
    expectError(await patch(org.admin, id, { stream_post_policy: 5 }), 400, "BAD_REQUEST", "Invalid stream_post_policy");
  });

  it("message_retention_days: organization owners only", async () => {
    const id = await m.createStream(org.owner, "archive", [org.owner]);
    await m.outbox();
    expectError(await patch(org.admin, id, { message_retention_days: "30" }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await patch(org.owner, id, { message_retention_days: "0" }), 400, "REQUEST_VARIABLE_INVALID", "Bad value for 'message_retention_days': 0");
    await m.ok(await patch(org.owner, id, { message_retention_days: "30" }));
    await m.ok(await patch(org.owner, id, { message_retention_days: JSON.stringify("unlimited") }));
    await m.ok(await patch(org.owner, id, { message_retention_days: JSON.stringify("realm_default") }));
    expect((await settingEvents()).map((e) => [e.event.property, e.event.value])).toEqual([
      ["message_retention_days", 30],
      ["message_retention_days", -1],
      ["message_retention_days", null],
    ]);
  });

  it("can_remove_subscribers_group: a group id, or {new, old} with the current one", async () => {
    const id = await m.createStream(org.owner, "garden", [org.owner]);
    const realm = await m.deps.accounts.getRealm(org.realmId);
    const [admins, moderators] = [realm.system_groups["role:administrators"], realm.system_groups["role:moderators"]];
    await m.outbox();
    await m.ok(await patch(org.admin, id, { can_remove_subscribers_group: moderators }));
    expectError(await patch(org.admin, id, { can_remove_subscribers_group: JSON.stringify({ new: admins, old: admins }) }), 400, "BAD_REQUEST", "'old' value does not match the expected value.");
    expectError(await patch(org.admin, id, { can_remove_subscribers_group: 999999 }), 400, "BAD_REQUEST", "Invalid user group");
    await m.ok(await patch(org.admin, id, { can_remove_subscribers_group: JSON.stringify({ new: admins, old: moderators }) }));
    expect((await m.clientEvents()).map((e) => [e.event.property, e.event.value])).toEqual([
      ["can_remove_subscribers_group", moderators],
      ["can_remove_subscribers_group", admins],
    ]);
  });

  it("making a private channel public: a create (and its subscribers) for those who could not see it, an update for the others", async () => {
    const id = await m.createStream(org.member, "secret-garden", [org.member, org.admin], { invite_only: true });
    await m.outbox();
    await m.ok(await patch(org.admin, id, { is_private: false }));
    expect(await stream(id)).toMatchObject({ invite_only: false, history_public_to_subscribers: true });
    const events = await settingEvents();
    expect(events.map((e) => e.type)).toEqual(["messaging.stream.access_gained", "messaging.subscription.peer_added", "messaging.stream.updated"]);
    const gained = [org.moderator, org.member2, org.bot].map((u) => u.user_id).sort(byId);
    expect(events[0].users).toEqual(gained);
    expect(events[0].event).toMatchObject({ type: "stream", op: "create", streams: [{ stream_id: id, invite_only: false }] });
    expect(events[1]).toMatchObject({ users: gained, event: { op: "peer_add", stream_ids: [id], user_ids: [org.admin.user_id, org.member.user_id].sort(byId) } });
    expect(events[2].users).toEqual([org.owner, org.admin, org.member].map((u) => u.user_id).sort(byId));
    expect(events[2].event).toEqual({
      type: "stream",
      op: "update",
      stream_id: id,
      name: "secret-garden",
      property: "invite_only",
      value: false,
      history_public_to_subscribers: true,
      is_web_public: false,
    });

    // And back: those who are neither subscribers nor administrators lose it.
    await m.ok(await patch(org.admin, id, { is_private: true }));
    expect(await stream(id)).toMatchObject({ invite_only: true, history_public_to_subscribers: false });
    const back = await settingEvents();
    expect(back.map((e) => e.type)).toEqual(["messaging.stream.updated", "messaging.stream.access_lost"]);
    expect(back[1].users).toEqual(gained);
    expect(back[1].event).toMatchObject({ type: "stream", op: "delete", streams: [{ stream_id: id, invite_only: true }] });
  });

  it("privacy checks: Zulip's invalid combinations, web-public needs spectator access", async () => {
    const id = await m.createStream(org.owner, "rules", [org.owner]);
    await m.outbox();
    expectError(await patch(org.owner, id, { history_public_to_subscribers: false }), 400, "BAD_REQUEST", "Invalid parameters");
    expectError(await patch(org.owner, id, { is_web_public: true, is_private: true }), 400, "BAD_REQUEST", "Invalid parameters");
    await m.setRealmSetting(org.realmId, "enable_spectator_access", false);
    expectError(await patch(org.owner, id, { is_web_public: true }), 400, "BAD_REQUEST", "Web-public channels are not enabled.");
    await m.ok(await patch(org.owner, id, { is_private: true, history_public_to_subscribers: true }));
    expect(await stream(id)).toMatchObject({ invite_only: true, history_public_to_subscribers: true });
    // Nothing changes: no event.
    await m.outbox();
    await m.ok(await patch(org.owner, id, { is_private: true, history_public_to_subscribers: true }));
    expect(await m.clientEvents()).toEqual([]);
  });

  it("web-public: guests gain sight of the channel, and lose it again", async () => {
    const id = await m.createStream(org.owner, "town-hall", [org.owner]);
    await m.setRealmSetting(org.realmId, "enable_spectator_access", true);
    await m.outbox();
    await m.ok(await patch(org.owner, id, { is_web_public: true }));
    const events = await settingEvents();
    expect(events.map((e) => [e.type, e.users])).toEqual([
      ["messaging.stream.access_gained", [org.guest.user_id]],
      ["messaging.subscription.peer_added", [org.guest.user_id]],
      ["messaging.stream.updated", [org.owner, org.admin, org.moderator, org.member, org.member2, org.bot].map((u) => u.user_id).sort(byId)],
    ]);
    expect(events[2].event).toMatchObject({ property: "invite_only", value: false, is_web_public: true, history_public_to_subscribers: true });
    await m.ok(await patch(org.owner, id, { is_web_public: false }));
    expect((await settingEvents()).map((e) => [e.type, e.users.includes(org.guest.user_id)])).toEqual([
      ["messaging.stream.updated", false],
      ["messaging.stream.access_lost", true],
    ]);
    await m.setRealmSetting(org.realmId, "enable_spectator_access", false);
  });

  it("is_default_stream: a default channel cannot be private", async () => {
    const id = await m.createStream(org.owner, "lobby", [org.owner]);
    await m.outbox();
    await m.ok(await patch(org.admin, id, { is_default_stream: true }));
    expect((await m.clientEvents()).map((e) => e.event.type)).toEqual(["default_streams"]);
    expectError(await patch(org.owner, id, { is_private: true }), 400, "BAD_REQUEST", "A default channel cannot be private.");
    await m.ok(await patch(org.owner, id, { is_private: true, is_default_stream: false }));
    const events = await m.clientEvents();
    expect(events.map((e) => e.event.type)).toContain("default_streams");
    expect(await stream(id)).toMatchObject({ invite_only: true });
  });
});
