import { GetUser, GetUsers } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doNotifyUserAccessChanged } from "../src/actions/user-access";
import { systemGroupIds } from "../src/store/user-groups";
import { expectError, type Accounts, type Org, type TestUser } from "./helpers";
import { startAccountsWithMessaging, type WithMessaging } from "./messaging-peer";
import { everyone, notices, registerState } from "./settings-kit";

/**
 * Zulip's can_access_all_users_group (feature level 225): PATCH /realm's checks and event, and
 * what a guest of an organization that sets it to role:members sees of users: register's lists,
 * GET /users and GET /users/{id}, the realm_user events that reach them, and the events telling
 * them of users they gained or lost access to. Messaging runs beside accounts (it knows who
 * shares a channel or a conversation with whom).
 */

let t: Accounts;
let m: WithMessaging;
let org: Org;
let other: Org;
let groups: Record<string, number>;

beforeAll(async () => {
  m = await startAccountsWithMessaging();
  t = m.t;
  org = await t.createOrg();
  other = await t.createOrg();
  groups = await systemGroupIds(t.pool, org.realmId);
});
afterAll(async () => {
  await m?.close();
});

const patchRealm = (who: TestUser, params: Record<string, unknown>) => t.call("PATCH", "/realm", { as: who.as, params });
const settingOf = async (who: TestUser) => (await registerState(t, who.as, { fetch_event_types: ["realm"] })).realm_can_access_all_users_group;
const internalSetting = async (o: Org) => (await t.ok(await t.call("GET", `/internal/realms/${o.realmId}`))).realm.settings.can_access_all_users_group;
const ids = (users: Array<{ user_id: number }>) => users.map((u) => u.user_id).sort((a, b) => a - b);
/** Whether an answer fits its route's contract (an undeclared key fails). */
const fits = (route: { response: { safeParse: (v: unknown) => { success: boolean } } }, { result: _r, msg: _m, ...rest }: Record<string, unknown>) =>
  route.response.safeParse(rest).success;

/** Zulip's "Unknown user" stand-in for user `id` of `o`. */
const standIn = (o: Org, id: number, profile = true) => ({
  user_id: id,
  email: `user${id}@${o.stringId}.invalid`,
  delivery_email: null,
  full_name: "Unknown user",
  date_joined: "1970-01-01T00:00:00.000Z",
  is_active: true,
  is_owner: false,
  is_admin: false,
  is_guest: false,
  is_billing_admin: false,
  is_bot: false,
  bot_type: null,
  role: 400,
  timezone: "",
  avatar_url: "/static/images/unknown-user-avatar.png",
  avatar_version: 1,
  ...(profile ? { profile_data: {} } : {}),
});

async function newUser(o: Org, name: string, role = 400): Promise<TestUser> {
  const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: o.realmId, email: `${name.toLowerCase()}@${o.slug}.test`, full_name: name, role } }));
  return { ...u, role, realm_id: o.realmId, as: t.identity({ ...u, role, realm_id: o.realmId }) };
}

async function sendDirect(from: TestUser, to: TestUser, content: string) {
  await t.ok(await m.call("POST", "/messages", { as: from.as, params: { type: "private", to: JSON.stringify([to.user_id]), content } }));
}

describe("PATCH /realm can_access_all_users_group", () => {
  it("role:everyone by default, in register and in the settings other services read", async () => {
    expect(await settingOf(org.guest)).toBe(groups["role:everyone"]);
    expect(await internalSetting(org)).toBe("role:everyone");
  });

  it("administrators only; only role:everyone or role:members, with Zulip's texts; nothing changes on a refusal", async () => {
    await t.ok(await t.call("POST", "/user_groups/create", { as: org.admin.as, params: { name: "readers", description: "d", members: JSON.stringify([org.member.user_id]) } }));
    const named = (await t.ok(await t.call("GET", "/user_groups", { as: org.admin.as }))).user_groups.find((g: any) => g.name === "readers").id;
    await t.markOutbox();
    expectError(await patchRealm(org.moderator, { can_access_all_users_group: groups["role:members"] }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    for (const name of ["role:nobody", "role:administrators", "role:owners", "role:internet", "role:moderators", "role:fullmembers"]) {
      expectError(
        await patchRealm(org.admin, { can_access_all_users_group: groups[name] }),
        400,
        "BAD_REQUEST",
        `'can_access_all_users_group' setting cannot be set to '${name}' group.`,
      );
    }
    expectError(await patchRealm(org.admin, { can_access_all_users_group: named }), 400, "BAD_REQUEST", "'can_access_all_users_group' must be a system user group.");
    const theirs = (await systemGroupIds(t.pool, other.realmId))["role:members"];
    expectError(await patchRealm(org.admin, { can_access_all_users_group: theirs }), 400, "BAD_REQUEST", "Invalid user group");
    const stale = JSON.stringify({ new: groups["role:members"], old: groups["role:members"] });
    expectError(await patchRealm(org.admin, { can_access_all_users_group: stale }), 400, "BAD_REQUEST", "'old' value does not match the expected value.");
    expectError(await patchRealm(org.admin, { can_access_all_users_group: "members" }), 400, "BAD_REQUEST");
    expect(await notices(t)).toEqual([]);
    expect(await settingOf(org.member)).toBe(groups["role:everyone"]);
  });

  it("role:members: the answer, a realm update_dict to everyone active, register and the internal settings; the other organization keeps its own", async () => {
    await t.markOutbox();
    const change = JSON.stringify({ new: groups["role:members"], old: groups["role:everyone"] });
    expect(await t.ok(await patchRealm(org.admin, { can_access_all_users_group: change }))).toEqual({
      result: "success",
      msg: "",
      can_access_all_users_group: groups["role:members"],
    });
    const sent = await notices(t);
    // Then the guest, who shares nothing with anyone, loses every other human (bots stay), as a fresh register would show.
    const humans = [org.owner, org.admin, org.moderator, org.member, org.member2].map((u) => u.user_id);
    expect(sent.map((n) => [n.event, n.users])).toEqual([
      [{ type: "realm", op: "update_dict", property: "default", data: { can_access_all_users_group: groups["role:members"] } }, everyone(org)],
      ...humans.map((id) => [{ type: "realm_user", op: "remove", person: { user_id: id, full_name: "Unknown user" } }, [org.guest.user_id]]),
    ]);
    expect(await settingOf(org.guest)).toBe(groups["role:members"]);
    expect(await internalSetting(org)).toBe("role:members");
    expect(await settingOf(other.guest)).toBe((await systemGroupIds(t.pool, other.realmId))["role:everyone"]);
    expect(await internalSetting(other)).toBe("role:everyone");
    // The same value again changes nothing and tells no one; the `_id` spelling is Zulip's too.
    expect(await t.ok(await patchRealm(org.owner, { can_access_all_users_group_id: groups["role:members"] }))).toEqual({ result: "success", msg: "" });
    expect(await notices(t)).toEqual([]);
  });
});

describe("a guest of an organization that limits guests", () => {
  let o: Org;
  let shared: TestUser;
  let gone: TestUser;
  let left: TestUser;

  beforeAll(async () => {
    o = await t.createOrg();
    // The guest shares a channel with the administrator, the member and `left` (deactivated
    // since), a conversation with the moderator; nothing with the owner, member2 and `gone`.
    shared = await newUser(o, "Shari", 400);
    left = await newUser(o, "Lefty", 400);
    gone = await newUser(o, "Gonzo", 400);
    await m.createChannel(o.admin, "corner", [o.guest, o.member, left]);
    await sendDirect(o.moderator, o.guest, "hello");
    await t.ok(await patchRealm(o.admin, { can_access_all_users_group: (await systemGroupIds(t.pool, o.realmId))["role:members"] }));
    for (const u of [left, gone]) await t.ok(await t.call("DELETE", `/users/${u.user_id}`, { as: o.admin.as }));
  });

  const accessible = () => [o.admin, o.moderator, o.member, o.guest, o.bot].map((u) => u.user_id).sort((a, b) => a - b);

  it("register: the users they access (bots too) as they are, every other one as Zulip's stand-in, counted as active", async () => {
    const state = await registerState(t, o.guest.as, { fetch_event_types: ["realm_user"] });
    const byId = new Map<number, any>(state.realm_users.map((u: any) => [u.user_id, u]));
    expect(ids(state.realm_users)).toEqual([...accessible(), o.owner.user_id, o.member2.user_id, shared.user_id, gone.user_id].sort((a, b) => a - b));
    for (const u of [o.owner, o.member2, shared, gone]) expect(byId.get(u.user_id)).toEqual(standIn(o, u.user_id));
    expect(byId.get(o.member.user_id)).toMatchObject({ full_name: "Mel Member", email: o.member.email });
    expect(ids(state.realm_non_active_users)).toEqual([left.user_id]);
    // Names of inaccessible users appear nowhere in the answer.
    expect(JSON.stringify(state)).not.toMatch(/Olivia Owner|Max Member|Shari|Gonzo/);
  });

  it("register with user_list_incomplete: the inaccessible users are left out", async () => {
    const state = await registerState(t, o.guest.as, { fetch_event_types: ["realm_user"], client_capabilities: { user_list_incomplete: true } });
    expect(ids(state.realm_users)).toEqual(accessible());
    expect(ids(state.realm_non_active_users)).toEqual([left.user_id]);
  });

  it("members and administrators see everyone as before", async () => {
    for (const who of [o.member, o.admin]) {
      const state = await registerState(t, who.as, { fetch_event_types: ["realm_user"], client_capabilities: { user_list_incomplete: true } });
      expect(ids(state.realm_users)).toEqual(ids([o.owner, o.admin, o.moderator, o.member, o.member2, o.guest, o.bot, shared]));
      expect(state.realm_users.some((u: any) => u.full_name === "Unknown user")).toBe(false);
    }
  });

  it("GET /users: stand-ins for the others (profile data only when asked); GET /users/{id} and by email refuse them", async () => {
    const list = await t.ok(await t.call("GET", "/users", { as: o.guest.as }));
    expect(fits(GetUsers, list)).toBe(true);
    const byId = new Map<number, any>(list.members.map((u: any) => [u.user_id, u]));
    expect(byId.get(o.member2.user_id)).toEqual(standIn(o, o.member2.user_id, false));
    expect(byId.get(gone.user_id)).toEqual(standIn(o, gone.user_id, false));
    expect(byId.get(left.user_id)).toMatchObject({ full_name: "Lefty", is_active: false });
    const withProfile = await t.ok(await t.call("GET", "/users", { as: o.guest.as, params: { include_custom_profile_fields: true } }));
    expect(withProfile.members.find((u: any) => u.user_id === o.owner.user_id)).toEqual(standIn(o, o.owner.user_id));

    for (const u of [o.owner, o.member2, gone]) {
      expectError(await t.call("GET", `/users/${u.user_id}`, { as: o.guest.as }), 400, "BAD_REQUEST", "Insufficient permission");
    }
    expectError(await t.call("GET", `/users/${encodeURIComponent(o.member2.email)}`, { as: o.guest.as }), 400, "BAD_REQUEST", "Insufficient permission");
    for (const u of [o.member, o.moderator, o.bot, left, o.guest]) {
      const one = await t.ok(await t.call("GET", `/users/${u.user_id}`, { as: o.guest.as }));
      expect(fits(GetUser, one)).toBe(true);
      expect(one.user.user_id).toBe(u.user_id);
    }
    expect((await t.ok(await t.call("GET", `/users/${o.member2.user_id}`, { as: o.member.as }))).user.full_name).toBe("Max Member");
    expect((await t.ok(await t.call("GET", "/users", { as: o.member.as }))).members.some((u: any) => u.full_name === "Unknown user")).toBe(false);
  });

  it("realm_user updates about a user reach only the guests who access them", async () => {
    await t.markOutbox();
    await t.ok(await t.call("PATCH", "/settings", { as: o.member2.as, params: { full_name: "Maxine" } }));
    await t.ok(await t.call("PATCH", "/settings", { as: o.member.as, params: { full_name: "Melody" } }));
    const updates = (await notices(t)).filter((n) => n.event.type === "realm_user");
    expect(updates.map((n) => [n.event.person, n.users])).toEqual([
      [{ user_id: o.member2.user_id, full_name: "Maxine" }, everyone(o, [shared]).filter((id) => id !== o.guest.user_id)],
      [{ user_id: o.member.user_id, full_name: "Melody" }, everyone(o, [shared])],
    ]);
    // Deactivation too (feature level 303); and an update about a bot reaches everyone.
    await t.ok(await t.call("DELETE", `/users/${shared.user_id}`, { as: o.admin.as }));
    const deactivated = (await notices(t)).find((n) => n.type === "accounts.user.deactivated")!;
    expect(deactivated.users).toEqual(everyone(o).filter((id) => id !== o.guest.user_id));
    await t.ok(await t.call("PATCH", `/bots/${o.bot.user_id}`, { as: o.member.as, params: { full_name: "Botty" } }));
    expect((await notices(t)).find((n) => n.event.type === "realm_user")!.users).toEqual(everyone(o));
  });

  it("a new user: guests get the stand-in, only on queues without user_list_incomplete; everyone else the user", async () => {
    await t.markOutbox();
    const fresh = await newUser(o, "Frida", 400);
    const adds = (await notices(t)).filter((n) => n.event.type === "realm_user" && n.event.op === "add");
    const real = adds.filter((n) => n.event.person.full_name === "Frida");
    expect(real.flatMap((n) => n.users).sort((a, b) => a - b)).toEqual(everyone(o, [fresh]).filter((id) => id !== o.guest.user_id));
    const hidden = adds.find((n) => n.event.person.full_name === "Unknown user")!;
    expect(hidden.users).toEqual([o.guest.user_id]);
    expect(hidden.event.person).toEqual(standIn(o, fresh.user_id));
    expect(hidden.payload.client.without_capability).toBe("user_list_incomplete");
  });

  it("users gained and lost (messaging's finding): realm_user add as the guest sees them, remove under the stand-in's name; deactivated users left out", async () => {
    await t.markOutbox();
    await doNotifyUserAccessChanged(t.deps, o.realmId, {
      gained: [{ user_id: o.guest.user_id, user_ids: [o.member2.user_id, gone.user_id] }],
      lost: [{ user_id: o.guest.user_id, user_ids: [o.moderator.user_id, left.user_id] }],
    });
    const sent = await notices(t);
    expect(sent.map((n) => [n.type, n.users])).toEqual([
      ["accounts.user_access.changed", [o.guest.user_id]],
      ["accounts.user_access.changed", [o.guest.user_id]],
    ]);
    expect(sent[0].event).toMatchObject({ type: "realm_user", op: "add", person: { user_id: o.member2.user_id, full_name: "Maxine", email: o.member2.email, profile_data: {} } });
    expect(sent[1].event).toEqual({ type: "realm_user", op: "remove", person: { user_id: o.moderator.user_id, full_name: "Unknown user" } });
  });

  it("back to role:everyone: the guest sees everyone again", async () => {
    await t.ok(await patchRealm(o.admin, { can_access_all_users_group: (await systemGroupIds(t.pool, o.realmId))["role:everyone"] }));
    const state = await registerState(t, o.guest.as, { fetch_event_types: ["realm_user"] });
    expect(state.realm_users.some((u: any) => u.full_name === "Unknown user")).toBe(false);
    expect((await t.ok(await t.call("GET", `/users/${o.owner.user_id}`, { as: o.guest.as }))).user.full_name).toBe("Olivia Owner");
  });
});
