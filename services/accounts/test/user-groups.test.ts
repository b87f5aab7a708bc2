import { UserGroupAddEvent, UserGroupMembersEvent, UserGroupSubgroupsEvent, UserGroupUpdateEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";

let t: Accounts;
let org: Org;
let other: Org;
let sys: Record<string, number>;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  other = await t.createOrg();
  sys = (await t.ok(await t.call("GET", `/internal/realms/${org.realmId}`))).realm.system_groups;
});
afterAll(() => t?.close());

async function groups(as = org.member.as) {
  return (await t.ok(await t.call("GET", "/user_groups", { as }))).user_groups as any[];
}
async function create(name: string, members: number[], extra: Record<string, unknown> = {}, as = org.member.as) {
  await t.ok(await t.call("POST", "/user_groups/create", { as, params: { name, description: `${name} team`, members, ...extra } }));
  return (await groups()).find((g) => g.name === name);
}

describe("system groups", () => {
  it("lists the 8 system groups nested as Zulip nests them", async () => {
    const all = await groups();
    const byName = Object.fromEntries(all.filter((g) => g.is_system_group).map((g) => [g.name, g]));
    expect(Object.keys(byName)).toHaveLength(8);
    expect(byName["role:owners"].members).toEqual([org.owner.user_id]);
    expect(byName["role:administrators"]).toMatchObject({ members: [org.admin.user_id], direct_subgroup_ids: [sys["role:owners"]] });
    expect(byName["role:moderators"].direct_subgroup_ids).toEqual([sys["role:administrators"]]);
    expect(byName["role:fullmembers"].direct_subgroup_ids).toEqual([sys["role:moderators"]]);
    expect(byName["role:members"].direct_subgroup_ids).toEqual([sys["role:fullmembers"]]);
    expect(byName["role:everyone"]).toMatchObject({ members: [org.guest.user_id], direct_subgroup_ids: [sys["role:members"]] });
    expect(byName["role:internet"].direct_subgroup_ids).toEqual([sys["role:everyone"]]);
    expect(byName["role:nobody"]).toMatchObject({ members: [], direct_subgroup_ids: [] });
    // Members sit directly in role:members, and in role:fullmembers too (no waiting period here).
    const members = [org.member.user_id, org.member2.user_id, org.bot.user_id].sort((a, b) => a - b);
    expect(byName["role:fullmembers"].members).toEqual(members);
    expect(byName["role:members"].members).toEqual(members);
    expect(byName["role:internet"].members).toEqual([]);
  });

  it("recursive members of role:moderators include owners and admins", async () => {
    const r = await t.ok(await t.call("GET", `/user_groups/${sys["role:moderators"]}/members`, { as: org.member.as }));
    expect(r.members).toEqual([org.owner.user_id, org.admin.user_id, org.moderator.user_id].sort((a, b) => a - b));
    const direct = await t.ok(await t.call("GET", `/user_groups/${sys["role:moderators"]}/members`, { as: org.member.as, params: { direct_member_only: true } }));
    expect(direct.members).toEqual([org.moderator.user_id]);
    const subs = await t.ok(await t.call("GET", `/user_groups/${sys["role:moderators"]}/subgroups`, { as: org.member.as }));
    expect(subs.subgroups.sort()).toEqual([sys["role:administrators"], sys["role:owners"]].sort());
    const isMember = await t.ok(await t.call("GET", `/user_groups/${sys["role:everyone"]}/members/${org.owner.user_id}`, { as: org.member.as }));
    expect(isMember.is_user_group_member).toBe(true);
    const direct2 = await t.ok(await t.call("GET", `/user_groups/${sys["role:everyone"]}/members/${org.owner.user_id}`, { as: org.member.as, params: { direct_member_only: true } }));
    expect(direct2.is_user_group_member).toBe(false);
  });

  it("system groups cannot be modified", async () => {
    expectError(await t.call("POST", `/user_groups/${sys["role:members"]}/members`, { as: org.owner.as, params: { add: [org.guest.user_id] } }), 400, "BAD_REQUEST", "Insufficient permission");
    const g = await create("sysparent", []);
    expectError(await t.call("POST", `/user_groups/${sys["role:members"]}/subgroups`, { as: org.owner.as, params: { add: [g.id] } }), 400, "BAD_REQUEST", "Insufficient permission");
    // They may still be subgroups of other groups (user-groups-audit.test.ts).
    expectError(await t.call("PATCH", `/user_groups/${sys["role:members"]}`, { as: org.owner.as, params: { name: "x" } }), 400, "BAD_REQUEST", "Insufficient permission");
  });

  it("a new user joins their role's system group and add_members is sent", async () => {
    await t.markOutbox();
    const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "mod2@x.test", full_name: "Mod Two", role: 300 } }));
    const events = await t.outbox();
    // accounts.user.joined: the default channels are subscribed by accounts' own consumer.
    expect(events.map((e) => e.type)).toEqual(["accounts.user.created", "accounts.user_group.members_changed", "accounts.user.joined"]);
    const ev = events[1].payload.client.event;
    expect(UserGroupMembersEvent.parse(ev)).toEqual({ type: "user_group", op: "add_members", group_id: sys["role:moderators"], user_ids: [u.user_id] });
  });
});

describe("POST /user_groups/create", () => {
  it("creates a group with members and the default can_mention_group; emits user_group add", async () => {
    await t.markOutbox();
    const g = await create("support", [org.member.user_id, org.member2.user_id]);
    expect(g).toEqual({
      id: g.id,
      name: "support",
      description: "support team",
      members: [org.member.user_id, org.member2.user_id],
      direct_subgroup_ids: [],
      is_system_group: false,
      can_mention_group: sys["role:everyone"],
      deactivated: false,
    });
    const events = await t.outbox();
    expect(events).toHaveLength(1);
    expect(events[0].type).toBe("accounts.user_group.created");
    const { event, users } = events[0].payload.client;
    expect(UserGroupAddEvent.parse(event)).toEqual({ type: "user_group", op: "add", group: g });
    expect(users).toContain(org.guest.user_id);
    expect(users).not.toContain(other.owner.user_id);
  });

  it("accepts can_mention_group as an id, as an object, and under its old name", async () => {
    const a = await create("mention-int", [], { can_mention_group: sys["role:moderators"] });
    expect(a.can_mention_group).toBe(sys["role:moderators"]);
    const b = await create("mention-obj", [], { can_mention_group: { direct_members: [org.member.user_id], direct_subgroups: [a.id] } });
    expect(b.can_mention_group).toEqual({ direct_members: [org.member.user_id], direct_subgroups: [a.id] });
    const c = await create("mention-old", [], { can_mention_group_id: sys["role:administrators"] });
    expect(c.can_mention_group).toBe(sys["role:administrators"]);
    // A set of one group is that group; an empty set is role:nobody (as Zulip stores them).
    const d = await create("mention-one", [], { can_mention_group: { direct_members: [], direct_subgroups: [a.id] } });
    expect(d.can_mention_group).toBe(a.id);
    const e = await create("mention-none", [], { can_mention_group: { direct_members: [], direct_subgroups: [] } });
    expect(e.can_mention_group).toBe(sys["role:nobody"]);
    // The internal check messaging uses for group mentions evaluates the setting recursively.
    const can = async (groupId: number, userId: number) =>
      (await t.ok(await t.call("GET", "/internal/user_groups/can_mention", { params: { realm_id: org.realmId, group_id: groupId, user_id: userId } }))).can_mention;
    expect(await can(c.id, org.owner.user_id)).toBe(true);
    expect(await can(c.id, org.member.user_id)).toBe(false);
    expect(await can(b.id, org.member.user_id)).toBe(true);
    expect(await can(b.id, org.member2.user_id)).toBe(false);
    expect(await can(sys["role:members"], org.owner.user_id)).toBe(false);
    // Anonymous setting groups are not listed as groups.
    expect((await groups()).every((g) => g.name !== "")).toBe(true);
  });

  it("refuses role:internet and role:owners for can_mention_group, and bad input, storing nothing", async () => {
    await t.markOutbox();
    const before = (await groups()).length;
    const post = (params: Record<string, unknown>, as = org.member.as) => t.call("POST", "/user_groups/create", { as, params: { description: "d", members: [], ...params } });
    expectError(await post({ name: "g1", can_mention_group: sys["role:internet"] }), 400, "BAD_REQUEST", "'can_mention_group' setting cannot be set to 'role:internet' group.");
    expectError(await post({ name: "g1", can_mention_group: sys["role:owners"] }), 400, "BAD_REQUEST", "'can_mention_group' setting cannot be set to 'role:owners' group.");
    // Nor as a set naming them.
    for (const [members, name] of [
      [[], "role:internet"],
      [[org.member.user_id], "role:internet"],
      [[org.member.user_id], "role:owners"],
    ] as const) {
      expectError(
        await post({ name: "g1", can_mention_group: { direct_members: members, direct_subgroups: [sys[name]] } }),
        400,
        "BAD_REQUEST",
        `'can_mention_group' setting cannot be set to '${name}' group.`,
      );
    }
    const otherSys = (await t.ok(await t.call("GET", `/internal/realms/${other.realmId}`))).realm.system_groups;
    expectError(await post({ name: "g1", can_mention_group: otherSys["role:members"] }), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await post({ name: "g1", members: [999999] }), 400, "BAD_REQUEST", "Invalid user ID: 999999");
    expectError(await post({ name: "g1", members: [other.member.user_id] }), 400, "BAD_REQUEST", `Invalid user ID: ${other.member.user_id}`);
    expectError(await post({ name: "g1", members: "[1," }), 400, "BAD_REQUEST", "members is not valid JSON");
    expectError(await post({ name: "g1", members: ["a"] }), 400, "BAD_REQUEST");
    expectError(await post({ name: "support" }), 400, "BAD_REQUEST", "User group 'support' already exists.");
    expectError(await post({ name: "   " }), 400, "BAD_REQUEST", "User group name cannot be empty.");
    expectError(await post({ name: "role:mine" }), 400, "BAD_REQUEST", "User group name cannot start with 'role:'.");
    // Mention and narrow syntax would read these names as something else.
    for (const prefix of ["@", "user:", "stream:", "channel:"]) {
      expectError(await post({ name: `${prefix}mine` }), 400, "BAD_REQUEST", `User group name cannot start with '${prefix}'.`);
    }
    // Limits count characters as Python's len does: an emoji is one, not two UTF-16 units.
    expectError(await post({ name: "😀".repeat(101) }), 400, "BAD_REQUEST", "User group name cannot exceed 100 characters.");
    expectError(await post({ name: "g1", description: "😀".repeat(1025) }), 400, "BAD_REQUEST", "description is too long (limit: 1024 characters)");
    expectError(await post({ name: "g1", can_mention_group: sys["role:members"], can_mention_group_id: sys["role:members"] }), 400, "REQUEST_CONFUSING_VAR");
    expectError(await t.call("POST", "/user_groups/create", { as: org.member.as, params: { name: "g1", members: [] } }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'description' argument");
    expectError(await post({ name: "g1" }, org.guest.as), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await post({ name: "g1" }, org.bot.as), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    expect((await groups()).length).toBe(before);
    expect(await t.outbox()).toEqual([]);
  });

  it("GET /user_groups is refused for guests and bots, allowed for every other role", async () => {
    expectError(await t.call("GET", "/user_groups", { as: org.guest.as }), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await t.call("GET", "/user_groups", { as: org.bot.as }), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    for (const who of [org.owner, org.admin, org.moderator, org.member]) await t.ok(await t.call("GET", "/user_groups", { as: who.as }));
    const theirs = await t.ok(await t.call("GET", "/user_groups", { as: other.member.as }));
    expect(theirs.user_groups.some((g: any) => g.name === "support")).toBe(false);
  });
});

describe("members and subgroups", () => {
  it("adds and removes members with events; errors name the user", async () => {
    const g = await create("devs", [org.member.user_id]);
    await t.markOutbox();
    await t.ok(await t.call("POST", `/user_groups/${g.id}/members`, { as: org.member.as, params: { add: [org.member2.user_id, org.bot.user_id] } }));
    await t.ok(await t.call("POST", `/user_groups/${g.id}/members`, { as: org.member.as, params: { delete: [org.bot.user_id] } }));
    const events = (await t.outbox()).map((e) => UserGroupMembersEvent.parse(e.payload.client.event));
    expect(events).toEqual([
      { type: "user_group", op: "add_members", group_id: g.id, user_ids: [org.member2.user_id, org.bot.user_id] },
      { type: "user_group", op: "remove_members", group_id: g.id, user_ids: [org.bot.user_id] },
    ]);
    const url = `/user_groups/${g.id}/members`;
    expectError(await t.call("POST", url, { as: org.member.as, params: { add: [org.member2.user_id] } }), 400, "BAD_REQUEST", `User ${org.member2.user_id} is already a member of this group`);
    expectError(await t.call("POST", url, { as: org.member.as, params: { delete: [org.guest.user_id] } }), 400, "BAD_REQUEST", `There is no member '${org.guest.user_id}' in this user group`);
    expectError(await t.call("POST", url, { as: org.member.as, params: { add: [other.member.user_id] } }), 400, "BAD_REQUEST", `Invalid user ID: ${other.member.user_id}`);
    expectError(await t.call("POST", url, { as: org.member.as }), 400, "BAD_REQUEST", "Nothing to do. Specify at least one of 'add' or 'delete'.");
    // A member outside the group cannot change it; a moderator can.
    expectError(await t.call("POST", url, { as: (await mkMember("outsider")).as, params: { add: [org.guest.user_id] } }), 400, "BAD_REQUEST", "Insufficient permission");
    await t.ok(await t.call("POST", url, { as: org.moderator.as, params: { add: [org.guest.user_id] } }));
    expect((await t.ok(await t.call("GET", url, { as: org.member.as }))).members).toEqual([org.member.user_id, org.member2.user_id, org.guest.user_id].sort((a, b) => a - b));
    // Additions come first, as in Zulip: one request may add a user and remove them again.
    await t.markOutbox();
    await t.ok(await t.call("POST", url, { as: org.member.as, params: { add: [org.moderator.user_id], delete: [org.moderator.user_id] } }));
    expect((await t.outbox()).map((e) => UserGroupMembersEvent.parse(e.payload.client.event))).toEqual([
      { type: "user_group", op: "add_members", group_id: g.id, user_ids: [org.moderator.user_id] },
      { type: "user_group", op: "remove_members", group_id: g.id, user_ids: [org.moderator.user_id] },
    ]);
    // Another organization's group id is unknown.
    expectError(await t.call("POST", url, { as: other.owner.as, params: { add: [other.member.user_id] } }), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await t.call("GET", url, { as: other.owner.as }), 400, "BAD_REQUEST", "Invalid user group");
  });

  it("a deactivated member stays listed and can be removed (before Zulip's feature level 303)", async () => {
    const leaver = await mkMember("leaver");
    const g = await create("with-leaver", [org.member.user_id, leaver.user_id]);
    await t.ok(await t.call("DELETE", `/users/${leaver.user_id}`, { as: org.admin.as }));
    const url = `/user_groups/${g.id}/members`;
    expect((await t.ok(await t.call("GET", url, { as: org.member.as }))).members).toContain(leaver.user_id);
    await t.markOutbox();
    await t.ok(await t.call("POST", url, { as: org.member.as, params: { delete: [leaver.user_id] } }));
    expect((await t.outbox()).map((e) => UserGroupMembersEvent.parse(e.payload.client.event))).toEqual([
      { type: "user_group", op: "remove_members", group_id: g.id, user_ids: [leaver.user_id] },
    ]);
    expect((await t.ok(await t.call("GET", url, { as: org.member.as }))).members).toEqual([org.member.user_id]);
  });

  it("nests subgroups, refuses cycles and unknown groups, and resolves membership recursively", async () => {
    const a = await create("a-team", [org.member.user_id]);
    const b = await create("b-team", [org.member2.user_id]);
    const c = await create("c-team", [org.moderator.user_id]);
    await t.markOutbox();
    await t.ok(await t.call("POST", `/user_groups/${a.id}/subgroups`, { as: org.admin.as, params: { add: [b.id] } }));
    await t.ok(await t.call("POST", `/user_groups/${b.id}/subgroups`, { as: org.admin.as, params: { add: [c.id] } }));
    const ev = (await t.outbox()).map((e) => UserGroupSubgroupsEvent.parse(e.payload.client.event));
    expect(ev).toEqual([
      { type: "user_group", op: "add_subgroups", group_id: a.id, direct_subgroup_ids: [b.id] },
      { type: "user_group", op: "add_subgroups", group_id: b.id, direct_subgroup_ids: [c.id] },
    ]);
    const members = await t.ok(await t.call("GET", "/internal/user_groups/members", { params: { realm_id: org.realmId, group_id: a.id } }));
    expect(members.user_ids).toEqual([org.moderator.user_id, org.member.user_id, org.member2.user_id].sort((x, y) => x - y));
    const isMember = await t.ok(await t.call("GET", "/internal/user_groups/is_member", { params: { realm_id: org.realmId, group_id: a.id, user_id: org.moderator.user_id } }));
    expect(isMember.is_member).toBe(true);

    const sub = (id: number, params: Record<string, unknown>) => t.call("POST", `/user_groups/${id}/subgroups`, { as: org.admin.as, params });
    expectError(await sub(c.id, { add: [a.id] }), 400, "BAD_REQUEST", `User group ${c.id} is already a subgroup of one of the passed subgroups.`);
    expectError(await sub(a.id, { add: [a.id] }), 400, "BAD_REQUEST", `User group ${a.id} is already a subgroup of one of the passed subgroups.`);
    expectError(await sub(a.id, { add: [b.id] }), 400, "BAD_REQUEST", `User group ${b.id} is already a subgroup of this group.`);
    expectError(await sub(a.id, { delete: [c.id] }), 400, "BAD_REQUEST", `User group ${c.id} is not a subgroup of this group.`);
    expectError(await sub(a.id, { add: [987654] }), 400, "BAD_REQUEST", "Invalid user group ID: 987654");
    const theirs = await t.ok(await t.call("POST", "/user_groups/create", { as: other.owner.as, params: { name: "x", description: "", members: [] } }));
    expect(theirs.result).toBe("success");
    const theirId = (await t.ok(await t.call("GET", "/user_groups", { as: other.owner.as }))).user_groups.find((g: any) => g.name === "x").id;
    await t.markOutbox();
    expectError(await sub(a.id, { add: [theirId] }), 400, "BAD_REQUEST", `Invalid user group ID: ${theirId}`);
    expectError(await sub(a.id, {}), 400, "BAD_REQUEST", "Nothing to do. Specify at least one of 'add' or 'delete'.");
    expect(await t.outbox()).toEqual([]);

    // Additions come first, as for members.
    await t.markOutbox();
    await t.ok(await sub(a.id, { add: [c.id], delete: [c.id] }));
    expect((await t.outbox()).map((e) => UserGroupSubgroupsEvent.parse(e.payload.client.event))).toEqual([
      { type: "user_group", op: "add_subgroups", group_id: a.id, direct_subgroup_ids: [c.id] },
      { type: "user_group", op: "remove_subgroups", group_id: a.id, direct_subgroup_ids: [c.id] },
    ]);
    await t.ok(await sub(b.id, { delete: [c.id] }));
    const after = await t.ok(await t.call("GET", `/user_groups/${a.id}/members`, { as: org.member.as }));
    expect(after.members).toEqual([org.member.user_id, org.member2.user_id].sort((x, y) => x - y));
    const subs = await t.ok(await t.call("GET", `/user_groups/${a.id}/subgroups`, { as: org.member.as }));
    expect(subs.subgroups).toEqual([b.id]);
  });

  it("counts name and description lengths in characters, an emoji being one", async () => {
    const g = await create("😀".repeat(100), [org.member.user_id], { description: "😀".repeat(1024) });
    expect(g).toMatchObject({ name: "😀".repeat(100), description: "😀".repeat(1024) });
    await t.ok(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { name: "🎉".repeat(100), description: "🎉".repeat(1024) } }));
    expect((await groups()).find((x) => x.id === g.id)).toMatchObject({ name: "🎉".repeat(100), description: "🎉".repeat(1024) });
    expectError(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { name: "🎉".repeat(101) } }), 400, "BAD_REQUEST", "User group name cannot exceed 100 characters.");
  });

  it("PATCH updates name, description and can_mention_group with an update event", async () => {
    const g = await create("renameme", [org.member.user_id]);
    await t.markOutbox();
    await t.ok(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { name: "renamed", description: "new" } }));
    await t.ok(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { can_mention_group: { new: sys["role:members"], old: sys["role:everyone"] } } }));
    const events = (await t.outbox()).map((e) => UserGroupUpdateEvent.parse(e.payload.client.event));
    // One event per changed field, as Zulip sends them.
    expect(events).toEqual([
      { type: "user_group", op: "update", group_id: g.id, data: { name: "renamed" } },
      { type: "user_group", op: "update", group_id: g.id, data: { description: "new" } },
      { type: "user_group", op: "update", group_id: g.id, data: { can_mention_group: sys["role:members"] } },
    ]);
    expectError(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { can_mention_group: { new: sys["role:members"], old: sys["role:everyone"] } } }), 400, "BAD_REQUEST", "'old' value does not match the expected value.");
    expectError(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { name: "support" } }), 400, "BAD_REQUEST", "User group 'support' already exists.");
    expectError(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { name: "@renamed" } }), 400, "BAD_REQUEST", "User group name cannot start with '@'.");
  });

  it("compares 'old' as Zulip does: as sets, and a set of one group as that group", async () => {
    const patch = (id: number, value: unknown) => t.call("PATCH", `/user_groups/${id}`, { as: org.member.as, params: { can_mention_group: value } });
    const g = await create("old-check", [org.member.user_id]);
    const sup = await create("old-sub", [org.member2.user_id]);
    const set = { direct_members: [org.member.user_id, org.member2.user_id], direct_subgroups: [sup.id, sys["role:administrators"]] };
    await t.ok(await patch(g.id, { new: set }));
    await t.markOutbox();
    // The same members and subgroups in another order match.
    const reordered = { direct_members: [org.member2.user_id, org.member.user_id], direct_subgroups: [...set.direct_subgroups].reverse() };
    await t.ok(await patch(g.id, { new: sys["role:members"], old: reordered }));
    expect((await t.outbox()).map((e) => e.payload.client.event)).toEqual([
      { type: "user_group", op: "update", group_id: g.id, data: { can_mention_group: sys["role:members"] } },
    ]);
    // A set of exactly one group is that group, on the 'old' side as on the 'new' one.
    await t.ok(await patch(g.id, { new: sup.id, old: { direct_members: [], direct_subgroups: [sys["role:members"]] } }));
    expect((await groups()).find((x) => x.id === g.id).can_mention_group).toBe(sup.id);
    // And the empty set is role:nobody.
    await t.ok(await patch(g.id, { new: { direct_members: [], direct_subgroups: [] } }));
    await t.ok(await patch(g.id, { new: sup.id, old: { direct_members: [], direct_subgroups: [] } }));
    // A different set still does not match.
    await t.ok(await patch(g.id, { new: set }));
    const fewer = { direct_members: [org.member.user_id], direct_subgroups: set.direct_subgroups };
    expectError(await patch(g.id, { new: sup.id, old: fewer }), 400, "BAD_REQUEST", "'old' value does not match the expected value.");
    expectError(await patch(g.id, { new: sup.id, old: sup.id }), 400, "BAD_REQUEST", "'old' value does not match the expected value.");
    // The value it already has (in any order) changes nothing and sends no event.
    await t.markOutbox();
    await t.ok(await patch(g.id, { new: reordered, old: set }));
    expect(await t.outbox()).toEqual([]);
    expect((await groups()).find((x) => x.id === g.id).can_mention_group).toEqual({
      direct_members: set.direct_members,
      direct_subgroups: [...set.direct_subgroups].sort((a, b) => a - b),
    });
  });

  it("register state holds realm_user_groups", async () => {
    const state = await t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.guest.as, params: { fetch_event_types: ["realm_user_groups"] } }));
    expect(state.realm_user_groups.length).toBeGreaterThanOrEqual(8);
    expect(Object.keys(state).filter((k) => !["result", "msg"].includes(k))).toEqual(["realm_user_groups"]);
  });
});

async function mkMember(name: string) {
  const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: `${name}@${org.slug}.test`, full_name: name } }));
  return { ...u, as: t.identity({ ...u, realm_id: org.realmId, role: 400 }) };
}
