import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doPromoteNewFullMembers } from "../src/actions/system-groups";
import { startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { everyone, notices, registerState } from "./settings-kit";

/**
 * The role system groups as a Zulip client sees them: who is a direct member of which, how that
 * follows user creation, role changes, the waiting period and deactivation, and the user_group
 * events that tell clients.
 */

let t: Accounts;
const DAY = 86_400_000;

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

describe("role system groups, as Zulip structures them", () => {
  let org: Org;
  let sys: Record<string, number>;
  beforeAll(async () => {
    org = await t.createOrg();
    sys = await systemGroups(org);
  });

  it("each role's users are direct members of its group; members also of role:fullmembers; each group's one subgroup is the next role up", async () => {
    const g = await listed(org);
    const members = sorted([org.member.user_id, org.member2.user_id, org.bot.user_id]);
    const expected: Record<string, [number[], number[], string]> = {
      "role:owners": [[org.owner.user_id], [], "Owners of this organization"],
      "role:administrators": [[org.admin.user_id], [sys["role:owners"]], "Administrators of this organization, including owners"],
      "role:moderators": [[org.moderator.user_id], [sys["role:administrators"]], "Moderators of this organization, including administrators"],
      "role:fullmembers": [members, [sys["role:moderators"]], "Members of this organization, not including new accounts and guests"],
      "role:members": [members, [sys["role:fullmembers"]], "Members of this organization, not including guests"],
      "role:everyone": [[org.guest.user_id], [sys["role:members"]], "Everyone in this organization, including guests"],
      "role:internet": [[], [sys["role:everyone"]], "Everyone on the Internet"],
      "role:nobody": [[], [], "Nobody"],
    };
    for (const [name, [direct, subgroups, description]] of Object.entries(expected)) {
      expect(g[name], name).toMatchObject({ id: sys[name], members: direct, direct_subgroup_ids: subgroups, description, is_system_group: true });
      expect(await membersOf(org, sys[name], true), name).toEqual(direct);
    }
    // Recursively, role:members is everyone but the guest; role:fullmembers the same here.
    const nonGuests = sorted(everyone(org).filter((id) => id !== org.guest.user_id));
    expect(await membersOf(org, sys["role:members"])).toEqual(nonGuests);
    expect(await membersOf(org, sys["role:fullmembers"])).toEqual(nonGuests);
    expect(await isMember(org, sys["role:members"], org.member.user_id, true)).toBe(true);
    expect(await isMember(org, sys["role:members"], org.admin.user_id, true)).toBe(false);
    expect(await isMember(org, sys["role:members"], org.admin.user_id)).toBe(true);
    // register's realm_user_groups says the same.
    const state = await registerState(t, org.guest.as, { fetch_event_types: ["realm_user_groups"] });
    expect(state.realm_user_groups.find((x: any) => x.id === sys["role:members"]).members).toEqual(members);
  });

  it("a new member joins role:members and, with no waiting period, role:fullmembers: one add_members each", async () => {
    await t.markOutbox();
    const u = await createUser(org, "newcomer", 400);
    expect(await groupEvents()).toEqual([
      { type: "user_group", op: "add_members", group_id: sys["role:members"], user_ids: [u.user_id] },
      { type: "user_group", op: "add_members", group_id: sys["role:fullmembers"], user_ids: [u.user_id] },
    ]);
    const guest = await createUser(org, "visitor", 600);
    expect(await groupEvents()).toEqual([{ type: "user_group", op: "add_members", group_id: sys["role:everyone"], user_ids: [guest.user_id] }]);
  });

  it("a member made guest leaves role:members and role:fullmembers; made member again, rejoins both", async () => {
    const u = await createUser(org, "shifty", 400);
    await t.markOutbox();
    await t.ok(await t.call("PATCH", `/users/${u.user_id}`, { as: org.admin.as, params: { role: 600 } }));
    expect(await groupEvents()).toEqual([
      { type: "user_group", op: "remove_members", group_id: sys["role:members"], user_ids: [u.user_id] },
      { type: "user_group", op: "add_members", group_id: sys["role:everyone"], user_ids: [u.user_id] },
      { type: "user_group", op: "remove_members", group_id: sys["role:fullmembers"], user_ids: [u.user_id] },
    ]);
    await t.ok(await t.call("PATCH", `/users/${u.user_id}`, { as: org.admin.as, params: { role: 400 } }));
    expect(await groupEvents()).toEqual([
      { type: "user_group", op: "remove_members", group_id: sys["role:everyone"], user_ids: [u.user_id] },
      { type: "user_group", op: "add_members", group_id: sys["role:members"], user_ids: [u.user_id] },
      { type: "user_group", op: "add_members", group_id: sys["role:fullmembers"], user_ids: [u.user_id] },
    ]);
    // A moderator-to-administrator change does not touch role:fullmembers (they are in it through role:moderators).
    await t.ok(await t.call("PATCH", `/users/${org.moderator.user_id}`, { as: org.admin.as, params: { role: 200 } }));
    expect(await groupEvents()).toEqual([
      { type: "user_group", op: "remove_members", group_id: sys["role:moderators"], user_ids: [org.moderator.user_id] },
      { type: "user_group", op: "add_members", group_id: sys["role:administrators"], user_ids: [org.moderator.user_id] },
    ]);
    await t.ok(await t.call("PATCH", `/users/${org.moderator.user_id}`, { as: org.admin.as, params: { role: 300 } }));
  });
});

describe("the waiting period: new members are not full members until it ends", () => {
  let org: Org;
  let sys: Record<string, number>;
  let newbie: TestUser;
  let members: number[];
  const setWaitingPeriod = (days: number) => t.pool.query("UPDATE realms SET waiting_period_threshold = $2 WHERE id = $1", [org.realmId, days]);

  beforeAll(async () => {
    org = await t.createOrg();
    sys = await systemGroups(org);
  });

  it("a waiting period set later takes the members who do not meet it out of role:fullmembers", async () => {
    members = sorted([org.member.user_id, org.member2.user_id, org.bot.user_id]);
    await setWaitingPeriod(3);
    await t.markOutbox();
    await doPromoteNewFullMembers(t.deps);
    const got = await notices(t);
    expect(got.map((n) => n.event)).toEqual([{ type: "user_group", op: "remove_members", group_id: sys["role:fullmembers"], user_ids: members }]);
    expect(got[0].users).toEqual(everyone(org));
    const g = await listed(org);
    expect(g["role:fullmembers"].members).toEqual([]);
    expect(g["role:members"].members).toEqual(members);
    // Moderators and up stay full members through the subgroup.
    expect(await membersOf(org, sys["role:fullmembers"])).toEqual(sorted([org.owner.user_id, org.admin.user_id, org.moderator.user_id]));
  });

  it("a new member joins role:members only", async () => {
    await t.markOutbox();
    newbie = await createUser(org, "newbie", 400);
    expect(await groupEvents()).toEqual([{ type: "user_group", op: "add_members", group_id: sys["role:members"], user_ids: [newbie.user_id] }]);
    const g = await listed(org);
    expect(g["role:members"].members).toContain(newbie.user_id);
    expect(g["role:fullmembers"].members).not.toContain(newbie.user_id);
    expect(await isMember(org, sys["role:fullmembers"], newbie.user_id)).toBe(false);
    expect(await isMember(org, sys["role:members"], newbie.user_id)).toBe(true);
  });

  it("a new member made moderator and back meanwhile never enters role:fullmembers directly", async () => {
    await t.markOutbox();
    await t.ok(await t.call("PATCH", `/users/${newbie.user_id}`, { as: org.admin.as, params: { role: 300 } }));
    await t.ok(await t.call("PATCH", `/users/${newbie.user_id}`, { as: org.admin.as, params: { role: 400 } }));
    expect(await groupEvents()).toEqual([
      { type: "user_group", op: "remove_members", group_id: sys["role:members"], user_ids: [newbie.user_id] },
      { type: "user_group", op: "add_members", group_id: sys["role:moderators"], user_ids: [newbie.user_id] },
      { type: "user_group", op: "remove_members", group_id: sys["role:moderators"], user_ids: [newbie.user_id] },
      { type: "user_group", op: "add_members", group_id: sys["role:members"], user_ids: [newbie.user_id] },
    ]);
  });

  it("once the waiting period is over, the promotion adds them to role:fullmembers, once", async () => {
    await t.markOutbox();
    t.clock.advance(2 * DAY);
    await doPromoteNewFullMembers(t.deps);
    expect(await groupEvents()).toEqual([]);
    t.clock.advance(1 * DAY);
    await doPromoteNewFullMembers(t.deps);
    const all = sorted([...members, newbie.user_id]);
    const got = await notices(t);
    expect(got.map((n) => n.event)).toEqual([{ type: "user_group", op: "add_members", group_id: sys["role:fullmembers"], user_ids: all }]);
    expect(got[0].users).toEqual(everyone(org, [newbie]));
    expect((await listed(org))["role:fullmembers"].members).toEqual(all);
    await doPromoteNewFullMembers(t.deps);
    expect(await groupEvents()).toEqual([]);
  });
});

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

describe("migration 2030000000000: existing organizations get Zulip's structure", () => {
  it("members join role:members; role:fullmembers keeps only members past the waiting period; Zulip's descriptions", async () => {
    // The migration reads PostgreSQL's clock: accounts join now, not when the tests above moved to.
    t.clock.set(new Date());
    const org = await t.createOrg();
    const waiting = await t.createOrg();
    const sys = await systemGroups(org);
    const wsys = await systemGroups(waiting);
    const members = sorted([org.member.user_id, org.member2.user_id, org.bot.user_id]);
    const wmembers = sorted([waiting.member.user_id, waiting.member2.user_id, waiting.bot.user_id]);
    // The rows as we used to write them: a member directly in role:fullmembers only (role:members
    // only with a waiting period), and a waiting period raised later without anyone leaving.
    await t.pool.query("DELETE FROM user_group_members WHERE group_id = $1", [sys["role:members"]]);
    await t.pool.query("UPDATE realms SET waiting_period_threshold = 5 WHERE id = $1", [waiting.realmId]);
    await t.pool.query("DELETE FROM user_group_members WHERE group_id = $1 AND user_id = $2", [wsys["role:members"], waiting.member.user_id]);
    await t.pool.query("UPDATE user_groups SET description = 'All members, guests excluded' WHERE id = ANY($1::bigint[])", [[sys["role:members"], wsys["role:members"]]]);
    expect((await listed(org))["role:members"].members).toEqual([]);

    const file = readFileSync(fileURLToPath(new URL("../migrations/2030000000000_system-group-members.sql", import.meta.url)), "utf8");
    await t.pool.query(file.split("-- Down Migration")[0]);

    const g = await listed(org);
    expect(g["role:members"]).toMatchObject({ members, direct_subgroup_ids: [sys["role:fullmembers"]], description: "Members of this organization, not including guests" });
    expect(g["role:fullmembers"].members).toEqual(members);
    expect(g["role:everyone"].members).toEqual([org.guest.user_id]);
    expect(g["role:administrators"].members).toEqual([org.admin.user_id]);
    const w = await listed(waiting);
    expect(w["role:members"].members).toEqual(wmembers);
    expect(w["role:fullmembers"].members).toEqual([]);
    expect(w["role:moderators"].members).toEqual([waiting.moderator.user_id]);
  });
});
