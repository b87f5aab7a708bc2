import { createLogger } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app";
import { startAccounts, type Accounts, type Org, type TestUser } from "./helpers";

// Register's user lists and GET /users come from a list each accounts process keeps formatted.
// Here a second accounts process (its own cache, same database) makes every change, and the
// first one, which has already formatted the lists, must show it on its next read.
let t: Accounts;
let org: Org;
let other: FastifyInstance;
let viaOther: ReturnType<typeof serviceClient>;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  other = buildApp({ pool: t.pool, config: t.config, clock: t.clock, log: createLogger("accounts", "silent") });
  await other.ready();
  viaOther = serviceClient(other, t.config.INTERNAL_TOKEN);
});
afterAll(async () => {
  await other?.close();
  await t?.close();
});

const realmUsers = async (as: TestUser, params: Record<string, unknown> = {}) => {
  const s = await t.ok(await t.call("POST", "/internal/register_state/accounts", { as: as.as, params: { fetch_event_types: ["realm_user"], ...params } }));
  return s as { realm_users: any[]; realm_non_active_users: any[]; cross_realm_bots: any[] };
};
const members = async (as: TestUser, params: Record<string, unknown> = {}) =>
  (await t.ok(await t.call("GET", "/users", { as: as.as, params }))).members as any[];
const find = (list: any[], u: TestUser) => list.find((x) => x.user_id === u.user_id);
const change = async (method: Parameters<typeof viaOther>[0], path: string, as: TestUser, params: Record<string, unknown>) =>
  t.ok(await viaOther(method, path, { as: as.as, params }));

describe("formatted user lists follow changes made anywhere", () => {
  it("a name changed through another process shows in register and GET /users", async () => {
    expect(find((await realmUsers(org.member)).realm_users, org.member2).full_name).toBe("Max Member");
    expect(find(await members(org.member), org.member2).full_name).toBe("Max Member");

    await change("PATCH", `/users/${org.member2.user_id}`, org.admin, { full_name: "Maxine Member" });

    expect(find((await realmUsers(org.member)).realm_users, org.member2).full_name).toBe("Maxine Member");
    expect(find(await members(org.member), org.member2).full_name).toBe("Maxine Member");
  });

  it("delivery emails follow each viewer and the target's visibility setting", async () => {
    const visibleTo = async (viewer: TestUser) => find((await realmUsers(viewer)).realm_users, org.member).delivery_email;
    for (const viewer of [org.member, org.member2, org.admin, org.guest]) expect(await visibleTo(viewer)).toBe(org.member.email);

    // Administrators only (Zulip's EMAIL_ADDRESS_VISIBILITY_ADMINS = 3).
    await change("PATCH", "/settings", org.member, { email_address_visibility: 3 });

    expect(await visibleTo(org.member)).toBe(org.member.email);
    expect(await visibleTo(org.admin)).toBe(org.member.email);
    expect(await visibleTo(org.owner)).toBe(org.member.email);
    expect(await visibleTo(org.member2)).toBeNull();
    expect(await visibleTo(org.moderator)).toBeNull();
    expect(find(await members(org.member2), org.member).delivery_email).toBeNull();
    expect(find(await members(org.admin), org.member).delivery_email).toBe(org.member.email);

    // A setting that does not show in the list changes nothing in it.
    await change("PATCH", "/settings", org.member, { enter_sends: true });
    expect(await visibleTo(org.member2)).toBeNull();

    await change("PATCH", "/settings", org.member, { email_address_visibility: 1 });
    expect(await visibleTo(org.member2)).toBe(org.member.email);
  });

  it("custom profile values, and the removal of their field, show in profile_data", async () => {
    const profileOf = async (u: TestUser) => find((await realmUsers(org.guest)).realm_users, u).profile_data;
    const withProfile = async (u: TestUser) => find(await members(org.guest, { include_custom_profile_fields: true }), u).profile_data;
    expect(await profileOf(org.member)).toEqual({});
    expect(find(await members(org.guest), org.member)).not.toHaveProperty("profile_data");

    const { id } = await change("POST", "/realm/profile_fields", org.admin, { name: "Team", field_type: 1 });
    await change("PATCH", "/users/me/profile_data", org.member, { data: [{ id, value: "Platform" }] });

    const team = { [String(id)]: { value: "Platform", rendered_value: "<p>Platform</p>" } };
    expect(await profileOf(org.member)).toEqual(team);
    expect(await withProfile(org.member)).toEqual(team);
    expect(find(await members(org.guest), org.member)).not.toHaveProperty("profile_data");

    await change("DELETE", `/realm/profile_fields/${id}`, org.admin, {});
    expect(await profileOf(org.member)).toEqual({});
    expect(await withProfile(org.member)).toEqual({});
  });

  it("a deactivated user moves to realm_non_active_users, and back when reactivated", async () => {
    const before = await realmUsers(org.owner);
    expect(find(before.realm_users, org.moderator)).toBeDefined();
    expect(before.realm_non_active_users).toEqual([]);

    await change("DELETE", `/users/${org.moderator.user_id}`, org.owner, {});
    const after = await realmUsers(org.owner);
    expect(find(after.realm_users, org.moderator)).toBeUndefined();
    expect(find(after.realm_non_active_users, org.moderator)).toMatchObject({ is_active: false });
    expect(find(await members(org.owner), org.moderator)).toMatchObject({ is_active: false });

    await change("POST", `/users/${org.moderator.user_id}/reactivate`, org.owner, {});
    expect(find((await realmUsers(org.owner)).realm_users, org.moderator)).toMatchObject({ is_active: true });
  });

  it("a change written straight to the database (an operator's script) shows too", async () => {
    expect(find((await realmUsers(org.member)).realm_users, org.guest).full_name).toBe("Gus Guest");
    await t.pool.query("UPDATE users SET full_name = 'Gus Renamed' WHERE id = $1", [org.guest.user_id]);
    expect(find((await realmUsers(org.member)).realm_users, org.guest).full_name).toBe("Gus Renamed");
    expect(find(await members(org.member), org.guest).full_name).toBe("Gus Renamed");
  });

  it("a new user is listed at once; lists with and without client_gravatar stay apart", async () => {
    await realmUsers(org.member, { client_gravatar: true });
    await realmUsers(org.member, { client_gravatar: false });
    const created = await t.ok(
      await viaOther("POST", "/internal/users", { params: { realm_id: org.realmId, email: `new@${org.slug}.test`, full_name: "Nina New", role: 400 } }),
    );

    const gravatarByClient = find((await realmUsers(org.member, { client_gravatar: true })).realm_users, { user_id: created.user_id } as TestUser);
    const gravatarByServer = find((await realmUsers(org.member, { client_gravatar: false })).realm_users, { user_id: created.user_id } as TestUser);
    expect(gravatarByClient).toMatchObject({ full_name: "Nina New", avatar_url: null });
    expect(gravatarByServer).toMatchObject({ full_name: "Nina New", avatar_url: expect.stringContaining("gravatar") });
  });

  it("organizations never see each other's lists", async () => {
    const second = await t.createOrg();
    await realmUsers(org.member);
    const theirs = (await realmUsers(second.member)).realm_users.map((u) => u.user_id);
    const ours = (await realmUsers(org.member)).realm_users.map((u) => u.user_id);
    expect(theirs).toContain(second.owner.user_id);
    expect(theirs.some((id) => ours.includes(id))).toBe(false);
  });
});
