import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { drain, NO_RATE_LIMITS, ok, refused, register, until, useDemoStack, withoutId, type EventQueue } from "@chat/testkit/e2e";

/**
 * Zulip's can_access_all_users_group through the whole stack (gateway, accounts, messaging,
 * events): an administrator limits guests to the users they share a channel or a conversation
 * with; the guest's register, GET /users and GET /users/{id} show only those (others as Zulip's
 * "Unknown user" stand-in, or not at all with user_list_incomplete); the guest hears of users it
 * gains or loses through channel subscriptions, and of no presence, status or channel typing of
 * the others; a role change to or from guest tells that user whom they lost or gained; setting it
 * back restores everything; the other organization never changes.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));
const { as } = e2e;

const MODERN = { notification_settings_null: true, bulk_message_deletion: true, user_settings_object: true, linkifier_url_template: true };
const INCOMPLETE = { ...MODERN, user_list_incomplete: true };
const queueOf = (u: DemoUser, capabilities: Record<string, boolean> = INCOMPLETE) => register(as(u), { client_capabilities: capabilities });
const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
const idsOf = (users: Array<{ user_id: number }>) => sorted(users.map((u) => u.user_id));

/** The queue's events (read as they come) until `done` holds of all read so far. */
async function readUntil(q: EventQueue, what: string, done: (events: any[]) => boolean): Promise<any[]> {
  const events: any[] = [];
  return until(what, async () => {
    events.push(...(await drain(q)).map(withoutId));
    return done(events) && events;
  }, { timeoutMs: 15_000, pollMs: 100 });
}
const realmUserEvents = (events: any[], op: string) => events.filter((e) => e.type === "realm_user" && e.op === op);

/** The organization's system group ids by name, as register lists them. */
async function systemGroups(u: DemoUser): Promise<Record<string, number>> {
  const { realm_user_groups: groups } = ok(await as(u).post("/register", { fetch_event_types: JSON.stringify(["realm_user_groups"]) }));
  return Object.fromEntries(groups.filter((g: any) => g.is_system_group).map((g: any) => [g.name, g.id]));
}

describe("limited user access for guests", () => {
  let groups: Record<string, number>;
  let corner: number;

  it("only administrators set it, to role:everyone or role:members; everyone hears of the change", async () => {
    const { admin, member, guest } = org.users;
    groups = await systemGroups(admin);
    const before = await queueOf(guest);
    expect(before.state.realm_can_access_all_users_group).toBe(groups["role:everyone"]);
    refused(await as(member).patch("/realm", { can_access_all_users_group: groups["role:members"] }), "Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
    refused(await as(admin).patch("/realm", { can_access_all_users_group: groups["role:nobody"] }), "'can_access_all_users_group' setting cannot be set to 'role:nobody' group.");
    refused(await as(admin).patch("/realm", { can_access_all_users_group: groups["role:moderators"] }), "'can_access_all_users_group' setting cannot be set to 'role:moderators' group.");
    const other = (await systemGroups(org2.users.owner))["role:members"];
    refused(await as(admin).patch("/realm", { can_access_all_users_group: other }), "Invalid user group");

    const answer = ok(await as(admin).patch("/realm", { can_access_all_users_group: groups["role:members"] }));
    expect(answer.can_access_all_users_group).toBe(groups["role:members"]);
    const events = await readUntil(before, "the realm event", (ev) => ev.some((e) => e.type === "realm"));
    expect(events.filter((e) => e.type === "realm")).toEqual([
      { type: "realm", op: "update_dict", property: "default", data: { can_access_all_users_group: groups["role:members"] } },
    ]);
    expect((await queueOf(member)).state.realm_can_access_all_users_group).toBe(groups["role:members"]);
  });

  it("the guest, taken out of the channel everyone is in, loses everyone but bots; gains whom it shares a new channel with", async () => {
    const { owner, admin, moderator, member, member2, guest, bot } = org.users;
    const q = await queueOf(guest);
    ok(await as(admin).delete("/users/me/subscriptions", { subscriptions: JSON.stringify([org.channels.public.name]), principals: JSON.stringify([guest.user_id]) }));
    const humans = [owner, admin, moderator, member, member2].map((u) => u.user_id);
    const lost = await readUntil(q, "realm_user removes", (ev) => humans.every((id) => realmUserEvents(ev, "remove").some((e) => e.person.user_id === id)));
    expect(realmUserEvents(lost, "remove")).toEqual(expect.arrayContaining(humans.map((id) => ({ type: "realm_user", op: "remove", person: { user_id: id, full_name: "Unknown user" } }))));

    ok(await as(admin).post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "guest corner" }]), principals: JSON.stringify([admin.user_id, guest.user_id]) }));
    corner = ok(await as(admin).get("/get_stream_id", { stream: "guest corner" })).stream_id;
    const gained = await readUntil(q, "realm_user add", (ev) => realmUserEvents(ev, "add").length > 0);
    expect(realmUserEvents(gained, "add").map((e) => [e.person.user_id, e.person.full_name])).toEqual([[admin.user_id, admin.full_name]]);

    // register, with and without user_list_incomplete.
    const incomplete = (await queueOf(guest)).state;
    expect(idsOf(incomplete.realm_users)).toEqual(sorted([guest.user_id, admin.user_id, bot.user_id]));
    const complete = (await queueOf(guest, MODERN)).state;
    expect(idsOf(complete.realm_users)).toEqual(idsOf(ok(await as(member).get("/users")).members.filter((u: any) => u.is_active)));
    const standIns = complete.realm_users.filter((u: any) => ![guest.user_id, admin.user_id, bot.user_id].includes(u.user_id));
    expect(idsOf(standIns)).toEqual(sorted(humans.filter((id) => id !== admin.user_id)));
    for (const u of standIns) expect(u).toMatchObject({ full_name: "Unknown user", delivery_email: null, role: 400, avatar_url: "/static/images/unknown-user-avatar.png" });
    expect(JSON.stringify(complete.realm_users)).not.toContain(member2.full_name);

    // GET /users and GET /users/{id}.
    const { members } = ok(await as(guest).get("/users"));
    expect(members.find((u: any) => u.user_id === member2.user_id)).toMatchObject({ full_name: "Unknown user", email: expect.stringMatching(new RegExp(`^user${member2.user_id}@`)) });
    expect(members.find((u: any) => u.user_id === admin.user_id).full_name).toBe(admin.full_name);
    refused(await as(guest).get(`/users/${member2.user_id}`), "Insufficient permission");
    expect(ok(await as(guest).get(`/users/${admin.user_id}`)).user.full_name).toBe(admin.full_name);
    // The stand-in's avatar is served.
    const avatar = await fetch(new URL("/static/images/unknown-user-avatar.png", e2e.stack.urls.gateway));
    expect([avatar.status, avatar.headers.get("content-type")]).toEqual([200, "image/png"]);

    // Nothing changes for a member.
    const memberView = (await queueOf(member)).state.realm_users;
    expect(memberView.some((u: any) => u.full_name === "Unknown user")).toBe(false);
    expect(ok(await as(member).get(`/users/${member2.user_id}`)).user.full_name).toBe(member2.full_name);
  });

  it("a new user: a stand-in for clients without user_list_incomplete; the real user once they join a channel the guest is in", async () => {
    const { admin, guest } = org.users;
    ok(await as(admin).post("/default_streams", { stream_id: corner }));
    const q = await queueOf(guest);
    const old = await queueOf(guest, MODERN);
    const created = ok(await as(admin).post("/users", { email: "newt@e2e-access.test", password: "a-long-enough-password-e2e", full_name: "Newt Newcomer" }));
    // The new user joins the default channel the guest is in (asynchronously): then the guest learns of them.
    const events = await readUntil(q, "the new user", (ev) => realmUserEvents(ev, "add").length > 0);
    expect(realmUserEvents(events, "add").map((e) => [e.person.user_id, e.person.full_name])).toEqual([[created.user_id, "Newt Newcomer"]]);
    expect(events.some((e) => e.type === "subscription" && e.op === "peer_add" && e.user_ids.includes(created.user_id))).toBe(true);
    const oldEvents = await readUntil(old, "the stand-in, then the user", (ev) => realmUserEvents(ev, "add").length >= 2);
    expect(realmUserEvents(oldEvents, "add").map((e) => [e.person.user_id, e.person.full_name])).toEqual([
      [created.user_id, "Unknown user"],
      [created.user_id, "Newt Newcomer"],
    ]);
  });

  it("presence, status and channel typing of users the guest does not access never reach it; muting them is muting no such user", async () => {
    const { admin, member, member2, guest } = org.users;
    const q = await register(as(guest), { client_capabilities: { ...INCOMPLETE, stream_typing_notifications: true } });
    // Each time, first the user the guest does not access, then one it does: once the second
    // arrives, the first would have too.
    ok(await as(member2).post("/users/me/status", { status_text: "Hidden away" }));
    ok(await as(admin).post("/users/me/status", { status_text: "Here" }));
    ok(await as(member).post("/typing", { type: "channel", op: "start", stream_id: corner, topic: "t" }));
    ok(await as(admin).post("/typing", { type: "channel", op: "start", stream_id: corner, topic: "t" }));
    const events = await readUntil(q, "the admin's status and typing", (ev) => ev.some((e) => e.type === "typing" && e.sender.user_id === admin.user_id));
    expect(events.filter((e) => e.type === "user_status")).toEqual([{ type: "user_status", user_id: admin.user_id, status_text: "Here" }]);
    expect(events.filter((e) => e.type === "typing").map((e) => e.sender.user_id)).toEqual([admin.user_id]);

    ok(await as(member2).post("/users/me/presence", { status: "active" }));
    ok(await as(admin).post("/users/me/presence", { status: "active" }));
    const state = (await register(as(guest), { client_capabilities: INCOMPLETE, slim_presence: true })).state;
    expect(Object.keys(state.presences)).toContain(String(admin.user_id));
    expect(Object.keys(state.presences)).not.toContain(String(member2.user_id));
    expect(Object.keys(state.user_status)).not.toContain(String(member2.user_id));
    const memberState = (await register(as(member), { client_capabilities: INCOMPLETE, slim_presence: true })).state;
    expect(Object.keys(memberState.presences)).toEqual(expect.arrayContaining([String(admin.user_id), String(member2.user_id)]));
    refused(await as(guest).get(`/users/${member2.user_id}/status`), "Insufficient permission");

    refused(await as(guest).post(`/users/me/muted_users/${member2.user_id}`), "No such user");
    ok(await as(guest).post(`/users/me/muted_users/${admin.user_id}`));
    ok(await as(guest).delete(`/users/me/muted_users/${admin.user_id}`));
  });

  it("direct typing from a user the guest does not access yet never reaches it; a first message or a shared channel brings that user's presence and status after the add", async () => {
    const { admin, member, member2, guest } = org.users;
    const q = await queueOf(guest);
    const about = (events: any[], u: DemoUser) =>
      events.filter((e) => ["realm_user", "presence", "user_status"].includes(e.type) && (e.person?.user_id ?? e.user_id) === u.user_id);
    const kinds = (events: any[]) => events.map((e) => (e.type === "realm_user" ? `realm_user ${e.op}` : e.type));

    // member2 shares nothing with the guest: its typing succeeds but reaches only the others.
    ok(await as(member2).post("/typing", { type: "direct", op: "start", to: JSON.stringify([guest.user_id, admin.user_id]) }));
    // The admin, whom the guest accesses, types to the guest and member2: the guest is told, with
    // member2 as the "Unknown user" stand-in (id kept, stand-in email).
    ok(await as(admin).post("/typing", { type: "direct", op: "start", to: JSON.stringify([guest.user_id, member2.user_id]) }));
    const typed = await readUntil(q, "the admin's typing", (ev) => ev.some((e) => e.type === "typing" && e.sender.user_id === admin.user_id));
    expect(typed.filter((e) => e.type === "typing").map((e) => e.sender.user_id)).toEqual([admin.user_id]);
    const recipients = typed.find((e) => e.type === "typing").recipients.sort((a: any, b: any) => a.user_id - b.user_id);
    expect(recipients).toEqual(
      [
        { user_id: admin.user_id, email: admin.email },
        { user_id: guest.user_id, email: guest.email },
        { user_id: member2.user_id, email: expect.stringMatching(new RegExp(`^user${member2.user_id}@[^@]+\\.invalid$`)) },
      ].sort((a, b) => a.user_id - b.user_id),
    );
    const adminQueue = await queueOf(admin);
    ok(await as(member2).post("/typing", { type: "direct", op: "stop", to: JSON.stringify([guest.user_id, admin.user_id]) }));
    const adminTold = await readUntil(adminQueue, "member2's typing stop", (ev) => ev.some((e) => e.type === "typing"));
    expect(adminTold.filter((e) => e.type === "typing").map((e) => [e.op, e.sender.user_id])).toEqual([["stop", member2.user_id]]);

    // A first message: member2's presence and status (set earlier) follow the add, as a fresh register shows them.
    ok(await as(member2).post("/messages", { type: "direct", to: JSON.stringify([guest.user_id]), content: "hello" }));
    const gained = about(await readUntil(q, "member2's status", (ev) => about(ev, member2).some((e) => e.type === "user_status")), member2);
    expect(kinds(gained)).toEqual(["realm_user add", "presence", "user_status"]);
    expect(gained[2]).toEqual({ type: "user_status", user_id: member2.user_id, status_text: "Hidden away" });
    const state = (await queueOf(guest)).state;
    expect(state.user_status[member2.user_id]).toEqual({ status_text: "Hidden away" });
    expect(state.presences[gained[1].email].website).toEqual(gained[1].presence.website);

    // A channel shared from now on.
    ok(await as(member).post("/users/me/status", { status_text: "Joining" }));
    ok(await as(member).post("/users/me/presence", { status: "active" }));
    ok(await as(admin).post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "guest corner" }]), principals: JSON.stringify([member.user_id]) }));
    const joined = about(await readUntil(q, "the member's status", (ev) => about(ev, member).some((e) => e.type === "user_status")), member);
    expect(kinds(joined)).toEqual(["realm_user add", "presence", "user_status"]);
    expect(joined[2]).toEqual({ type: "user_status", user_id: member.user_id, status_text: "Joining" });
  });

  it("a member who becomes a guest hears of everyone it no longer accesses, and of them again once a member", async () => {
    const { owner, member2 } = org.users;
    const q = await queueOf(member2);
    ok(await as(owner).patch(`/users/${member2.user_id}`, { role: 600 }));
    const fresh = idsOf((await queueOf(member2)).state.realm_users);
    const humans = ok(await as(owner).get("/users")).members.filter((u: any) => u.is_active && !u.is_bot).map((u: any) => u.user_id);
    const unshared = sorted(humans.filter((id: number) => !fresh.includes(id)));
    expect(unshared.length).toBeGreaterThan(0);
    const lost = await readUntil(q, "realm_user removes", (ev) => realmUserEvents(ev, "remove").length >= unshared.length);
    expect(sorted(realmUserEvents(lost, "remove").map((e) => e.person.user_id))).toEqual(unshared);

    ok(await as(owner).patch(`/users/${member2.user_id}`, { role: 400 }));
    const gained = await readUntil(q, "realm_user adds", (ev) => realmUserEvents(ev, "add").length >= unshared.length);
    expect(sorted(realmUserEvents(gained, "add").map((e) => e.person.user_id))).toEqual(unshared);
    expect(realmUserEvents(gained, "add").some((e) => e.person.full_name === "Unknown user")).toBe(false);
  });

  it("the other organization is unaffected", async () => {
    const { owner, member } = org2.users;
    const state = (await queueOf(member, MODERN)).state;
    expect(state.realm_can_access_all_users_group).toBe((await systemGroups(owner))["role:everyone"]);
    expect(idsOf(state.realm_users)).toEqual(sorted([owner.user_id, member.user_id]));
    expect(state.realm_users.some((u: any) => u.full_name === "Unknown user")).toBe(false);
  });

  it("an administrator setting it back to role:everyone restores everything; the guest hears of each user it gains", async () => {
    const { admin, member2, guest } = org.users;
    const q = await queueOf(guest);
    const before = idsOf(q.state.realm_users);
    ok(await as(admin).patch("/realm", { can_access_all_users_group: groups["role:everyone"] }));
    const humans = ok(await as(admin).get("/users")).members.filter((u: any) => u.is_active && !u.is_bot).map((u: any) => u.user_id);
    const unshared = sorted(humans.filter((id: number) => !before.includes(id)));
    const gained = await readUntil(q, "realm_user adds", (ev) => realmUserEvents(ev, "add").length >= unshared.length);
    expect(sorted(realmUserEvents(gained, "add").map((e) => e.person.user_id))).toEqual(unshared);
    const state = (await queueOf(guest)).state;
    expect(state.realm_can_access_all_users_group).toBe(groups["role:everyone"]);
    expect(idsOf(state.realm_users)).toEqual(idsOf(ok(await as(admin).get("/users")).members.filter((u: any) => u.is_active)));
    expect(ok(await as(guest).get("/users")).members.some((u: any) => u.full_name === "Unknown user")).toBe(false);
    expect(ok(await as(guest).get(`/users/${member2.user_id}`)).user.full_name).toBe(member2.full_name);
  });
});
