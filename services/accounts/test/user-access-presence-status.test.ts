import { PresenceEvent, UserStatusEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemGroupIds } from "../src/store/user-groups";
import { expectError, type Accounts, type Org, type TestUser } from "./helpers";
import { startAccountsWithMessaging, type WithMessaging } from "./messaging-peer";
import { everyone, notices, registerState } from "./settings-kit";

/**
 * What else a guest of an organization that limits guests (can_access_all_users_group set to
 * role:members) learns of the users they do not access: nobody's presence or status in register,
 * the presence endpoints or events, no status or presence of them by id, and muting them is
 * muting no such user. Everyone else, and every guest of an organization that does not limit
 * guests, sees what they saw before. Messaging runs beside accounts (it knows who shares a
 * channel or a conversation with whom).
 */

let t: Accounts;
let m: WithMessaging;
/** Limits guests: its guest shares a channel with the member and a conversation with the moderator. */
let o: Org;
/** Does not limit guests. */
let open: Org;

beforeAll(async () => {
  m = await startAccountsWithMessaging();
  t = m.t;
  [o, open] = [await t.createOrg(), await t.createOrg()];
  await m.createChannel(o.admin, "corner", [o.guest, o.member]);
  await t.ok(await m.call("POST", "/messages", { as: o.moderator.as, params: { type: "private", to: JSON.stringify([o.guest.user_id]), content: "hi" } }));
  // The admin created the channel and so is subscribed: out again, so that the guest shares nothing with them.
  await t.ok(await m.call("DELETE", "/users/me/subscriptions", { as: o.admin.as, params: { subscriptions: JSON.stringify(["corner"]) } }));
  const groups = await systemGroupIds(t.pool, o.realmId);
  await t.ok(await t.call("PATCH", "/realm", { as: o.admin.as, params: { can_access_all_users_group: groups["role:members"] } }));
});
afterAll(async () => {
  await m?.close();
});

const ids = (users: TestUser[]) => users.map((u) => u.user_id).sort((a, b) => a - b);
const keys = (record: Record<string, unknown>) => Object.keys(record).sort();
const report = (u: TestUser, params: Record<string, unknown> = {}) => t.call("POST", "/users/me/presence", { as: u.as, params: { status: "active", ...params } });
const setStatus = (u: TestUser, params: Record<string, unknown>) => t.call("POST", "/users/me/status", { as: u.as, params });

/** The client events of `type` written since the last look, each checked against its contract, with their audience. */
async function eventsOf(type: "presence" | "user_status") {
  const schema = type === "presence" ? PresenceEvent : UserStatusEvent;
  return (await notices(t)).filter((n) => n.event.type === type).map((n) => ({ event: schema.parse(n.event) as { user_id: number }, users: n.users }));
}

describe("presence", () => {
  it("events about a user reach only the guests who access them", async () => {
    await t.markOutbox();
    for (const u of [o.owner, o.member, o.moderator, o.guest, open.owner]) await t.ok(await report(u));
    const sent = await eventsOf("presence");
    expect(sent.map((e) => [e.event.user_id, e.users])).toEqual([
      [o.owner.user_id, everyone(o).filter((id) => id !== o.guest.user_id)],
      [o.member.user_id, everyone(o)],
      [o.moderator.user_id, everyone(o)],
      [o.guest.user_id, everyone(o)],
      [open.owner.user_id, everyone(open)],
    ]);
  });

  it("register, POST /users/me/presence and GET /realm/presence show the guest only the users it accesses, in both formats", async () => {
    const state = await registerState(t, o.guest.as, { fetch_event_types: ["presence"], slim_presence: true });
    expect(keys(state.presences)).toEqual(ids([o.member, o.moderator, o.guest]).map(String).sort());
    const legacy = await registerState(t, o.guest.as, { fetch_event_types: ["presence"] });
    expect(keys(legacy.presences)).toEqual([o.member.email, o.moderator.email, o.guest.email].sort());
    const modern = await t.ok(await report(o.guest, { last_update_id: -1 }));
    expect(keys(modern.presences)).toEqual(ids([o.member, o.moderator, o.guest]).map(String).sort());
    const realm = await t.ok(await t.call("GET", "/realm/presence", { as: o.guest.as }));
    expect(keys(realm.presences)).toEqual([o.member.email, o.moderator.email, o.guest.email].sort());
    // Everyone else sees every presence, and so does the guest of an organization that does not limit guests.
    const all = ids([o.owner, o.member, o.moderator, o.guest]).map(String).sort();
    expect(keys((await registerState(t, o.member2.as, { fetch_event_types: ["presence"], slim_presence: true })).presences)).toEqual(all);
    await t.ok(await report(open.member));
    expect(keys((await t.ok(await report(open.guest, { last_update_id: -1 }))).presences)).toEqual(ids([open.owner, open.member, open.guest]).map(String).sort());
  });

  it("GET /users/{id}/presence refuses the guest a user it does not access", async () => {
    expectError(await t.call("GET", `/users/${o.owner.user_id}/presence`, { as: o.guest.as }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await t.call("GET", `/users/${encodeURIComponent(o.owner.email)}/presence`, { as: o.guest.as }), 400, "BAD_REQUEST", "Insufficient permission");
    expect((await t.ok(await t.call("GET", `/users/${o.member.user_id}/presence`, { as: o.guest.as }))).presence.aggregated.status).toBe("active");
    expect((await t.ok(await t.call("GET", `/users/${o.owner.user_id}/presence`, { as: o.member.as }))).presence.aggregated.status).toBe("active");
  });

  it("with CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE off (Zulip's default), presence is the guest's as anyone's", async () => {
    const seen = async () => keys((await registerState(t, o.guest.as, { fetch_event_types: ["presence"], slim_presence: true })).presences);
    await t.ok(await report(o.member2));
    expect(await seen()).not.toContain(String(o.member2.user_id));
    t.deps.config.CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE = false;
    try {
      await t.markOutbox();
      t.clock.advance(300_000);
      await t.ok(await report(o.member2));
      expect((await eventsOf("presence")).map((e) => [e.event.user_id, e.users])).toEqual([[o.member2.user_id, everyone(o)]]);
      expect(await seen()).toContain(String(o.member2.user_id));
      // Reported more than the offline threshold ago.
      expect((await t.ok(await t.call("GET", `/users/${o.owner.user_id}/presence`, { as: o.guest.as }))).presence.aggregated.status).toBe("offline");
    } finally {
      t.deps.config.CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE = true;
    }
  });
});

describe("user status", () => {
  beforeAll(async () => {
    for (const [u, text] of [[o.owner, "Owning"], [o.member, "Membering"], [open.owner, "Open"]] as const) await t.ok(await setStatus(u, { status_text: text }));
  });

  it("events about a user reach only the guests who access them", async () => {
    await t.markOutbox();
    await t.ok(await setStatus(o.member2, { status_text: "Lunch" }));
    await t.ok(await setStatus(o.moderator, { status_text: "Moderating" }));
    await t.ok(await setStatus(open.member, { status_text: "Open too" }));
    expect((await eventsOf("user_status")).map((e) => [e.event, e.users])).toEqual([
      [{ type: "user_status", user_id: o.member2.user_id, status_text: "Lunch" }, everyone(o).filter((id) => id !== o.guest.user_id)],
      [{ type: "user_status", user_id: o.moderator.user_id, status_text: "Moderating" }, everyone(o)],
      [{ type: "user_status", user_id: open.member.user_id, status_text: "Open too" }, everyone(open)],
    ]);
  });

  it("register: the guest gets only the statuses of users it accesses; everyone else all of them", async () => {
    const guest = (await registerState(t, o.guest.as, { fetch_event_types: ["user_status"] })).user_status;
    expect(guest).toEqual({ [o.member.user_id]: { status_text: "Membering" }, [o.moderator.user_id]: { status_text: "Moderating" } });
    const member = (await registerState(t, o.member.as, { fetch_event_types: ["user_status"] })).user_status;
    expect(keys(member)).toEqual(ids([o.owner, o.member, o.member2, o.moderator]).map(String).sort());
    const openGuest = (await registerState(t, open.guest.as, { fetch_event_types: ["user_status"] })).user_status;
    expect(keys(openGuest)).toEqual(ids([open.owner, open.member]).map(String).sort());
  });

  it("GET /users/{id}/status refuses the guest a user it does not access", async () => {
    expectError(await t.call("GET", `/users/${o.owner.user_id}/status`, { as: o.guest.as }), 400, "BAD_REQUEST", "Insufficient permission");
    expect((await t.ok(await t.call("GET", `/users/${o.member.user_id}/status`, { as: o.guest.as }))).status).toEqual({ status_text: "Membering" });
    expect((await t.ok(await t.call("GET", `/users/${o.owner.user_id}/status`, { as: o.member.as }))).status).toEqual({ status_text: "Owning" });
    expect((await t.ok(await t.call("GET", `/users/${open.owner.user_id}/status`, { as: open.guest.as }))).status).toEqual({ status_text: "Open" });
  });
});

describe("muting", () => {
  const mute = (who: TestUser, id: number) => t.call("POST", `/users/me/muted_users/${id}`, { as: who.as });
  const unmute = (who: TestUser, id: number) => t.call("DELETE", `/users/me/muted_users/${id}`, { as: who.as });

  it("a user the guest does not access is no such user, to mute or to unmute; nothing changes", async () => {
    await t.markOutbox();
    for (const u of [o.owner, o.admin, o.member2]) {
      expectError(await mute(o.guest, u.user_id), 400, "BAD_REQUEST", "No such user");
      expectError(await unmute(o.guest, u.user_id), 400, "BAD_REQUEST", "No such user");
    }
    expect(await notices(t)).toEqual([]);
    expect((await registerState(t, o.guest.as, { fetch_event_types: ["muted_users"] })).muted_users).toEqual([]);
  });

  it("the users it accesses (bots too) are muted as before; so are all users by a member, and by a guest of an organization that does not limit", async () => {
    for (const u of [o.member, o.moderator, o.bot]) await t.ok(await mute(o.guest, u.user_id));
    const muted = (await registerState(t, o.guest.as, { fetch_event_types: ["muted_users"] })).muted_users.map((u: { id: number }) => u.id);
    expect(muted.sort((a: number, b: number) => a - b)).toEqual(ids([o.member, o.moderator, o.bot]));
    await t.ok(await unmute(o.guest, o.member.user_id));
    await t.ok(await mute(o.member, o.owner.user_id));
    await t.ok(await mute(open.guest, open.owner.user_id));
  });
});
