import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { everyone, notices, registerState } from "./settings-kit";

/**
 * The role system groups as a Zulip client sees them: who is a direct member of which, how that
 * follows user creation, role changes, the waiting period and deactivation, and the user_group
 * events that tell clients.
 */

let t: Accounts;

beforeAll(async () => {
  t = await startAccounts();
});
afterAll(() => t?.close());

const systemGroups = async (org: Org): Promise<Record<string, number>> =>
  (await t.ok(await t.call("GET", `/internal/realms/${org.realmId}`))).realm.system_groups;
const listed = async (org: Org) => {
  const { user_groups } = await t.ok(await t.call("GET", "/user_groups", { as: org.member.as }));
  return Object.fromEntries(user_groups.map((g: any) => [g.name, g]));
};
const membersOf = async (org: Org, groupId: number, directOnly = false) =>
  (await t.ok(await t.call("GET", `/user_groups/${groupId}/members`, { as: org.member.as, params: { direct_member_only: directOnly } }))).members;
const isMember = async (org: Org, groupId: number, userId: number, directOnly = false) =>
  (await t.ok(await t.call("GET", `/user_groups/${groupId}/members/${userId}`, { as: org.member.as, params: { direct_member_only: directOnly } })))
    .is_user_group_member;
const groupEvents = async () => (await notices(t)).filter((n) => n.event.type === "user_group").map((n) => n.event);
const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

async function createUser(org: Org, name: string, role: number): Promise<TestUser> {
  const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: `${name}@${org.slug}.test`, full_name: name, role } }));
  return { ...u, role, realm_id: org.realmId, as: t.identity({ ...u, role, realm_id: org.realmId }) };
}

describe("deactivated users in group member lists (feature level 267)", () => {
  let org: Org;
  let sys: Record<string, number>;
  let leaver: TestUser;
  let team: number;
  beforeAll(async () => {
    org = await t.createOrg();
    sys = await systemGroups(org);
    leaver = await createUser(org, "leaver", 400);
    await t.ok(
      await t.call("POST", "/user_groups/create", { as: org.member.as, params: { name: "team", description: "Team", members: [org.member.user_id, leaver.user_id] } }),
    );
    team = (await listed(org)).team.id;
  });

  it("stay listed, as Zulip listed them before feature level 303, and deactivation sends no user_group event", async () => {
    await t.markOutbox();
    await t.ok(await t.call("DELETE", `/users/${leaver.user_id}`, { as: org.admin.as }));
    expect(await groupEvents()).toEqual([]);
    const g = await listed(org);
    expect(g.team.members).toEqual(sorted([org.member.user_id, leaver.user_id]));
    const state = await registerState(t, org.member.as, { fetch_event_types: ["realm_user_groups"] });
    expect(state.realm_user_groups.find((x: any) => x.id === team).members).toEqual(sorted([org.member.user_id, leaver.user_id]));
    expect(await membersOf(org, team, true)).toEqual(sorted([org.member.user_id, leaver.user_id]));
    expect(await membersOf(org, sys["role:members"])).toContain(leaver.user_id);
    expect(await isMember(org, team, leaver.user_id)).toBe(true);
    expect(await isMember(org, team, leaver.user_id, true)).toBe(true);
  });

  it("but do not count for what the services check (permissions, mentions)", async () => {
    const internal = await t.ok(await t.call("GET", "/internal/user_groups/is_member", { params: { realm_id: org.realmId, group_id: team, user_id: leaver.user_id } }));
    expect(internal.is_member).toBe(false);
    const all = await t.ok(await t.call("GET", "/internal/user_groups/members", { params: { realm_id: org.realmId, group_id: team } }));
    expect(all.user_ids).not.toContain(leaver.user_id);
  });

  it("reactivation sends no user_group event either: the lists never changed", async () => {
    await t.markOutbox();
    await t.ok(await t.call("POST", `/users/${leaver.user_id}/reactivate`, { as: org.admin.as }));
    expect(await groupEvents()).toEqual([]);
    expect((await listed(org)).team.members).toEqual(sorted([org.member.user_id, leaver.user_id]));
  });
});
