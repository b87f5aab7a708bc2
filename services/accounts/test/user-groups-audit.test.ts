import { UserGroupMembersEvent, UserGroupSubgroupsEvent, UserGroupUpdateEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, type Accounts, type Org } from "./helpers";
import { startAccountsWithMessaging, type WithMessaging } from "./messaging-peer";

/**
 * User groups audited against Zulip 9 (feature level 267) where the spec (2.6, 4.12-4.14) is
 * silent: who may change a group, system groups as subgroups, what member changes refuse, one
 * update event per changed field, and mentions through the real messaging service.
 */

let m: WithMessaging;
let t: Accounts;
let org: Org;
let other: Org;
let sys: Record<string, number>;
let notificationBotId: number;

beforeAll(async () => {
  m = await startAccountsWithMessaging();
  t = m.t;
  org = await t.createOrg();
  other = await t.createOrg();
  const realm = (await t.ok(await t.call("GET", `/internal/realms/${org.realmId}`))).realm;
  sys = realm.system_groups;
  notificationBotId = realm.notification_bot_id;
});
afterAll(async () => {
  await m?.close();
});

async function groups(as = org.member.as) {
  return (await t.ok(await t.call("GET", "/user_groups", { as }))).user_groups as any[];
}
async function create(name: string, members: number[], extra: Record<string, unknown> = {}, as = org.member.as): Promise<any> {
  await t.ok(await t.call("POST", "/user_groups/create", { as, params: { name, description: `${name} team`, members, ...extra } }));
  return (await groups()).find((g) => g.name === name);
}
async function newMember(name: string) {
  const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: `${name}@${org.slug}.test`, full_name: name } }));
  return { ...u, as: t.identity({ ...u, realm_id: org.realmId, role: 400 }) };
}
const byId = (a: number, b: number) => a - b;

describe("who may change a group (Zulip 9: its direct members, moderators and above)", () => {
  it("the creator who is not a member may not change it, nor may a member of a subgroup only", async () => {
    // member creates a group they are not in.
    const g = await create("not-mine", [org.member2.user_id]);
    const inner = await create("inner-crowd", [org.guest.user_id]);
    await t.ok(await t.call("POST", `/user_groups/${g.id}/subgroups`, { as: org.admin.as, params: { add: [inner.id] } }));
    await t.markOutbox();
    const guest = org.guest;
    const attempts = (as: typeof org.member.as) => [
      t.call("PATCH", `/user_groups/${g.id}`, { as, params: { name: "taken-over" } }),
      t.call("POST", `/user_groups/${g.id}/members`, { as, params: { add: [org.moderator.user_id] } }),
      t.call("POST", `/user_groups/${g.id}/subgroups`, { as, params: { delete: [inner.id] } }),
      t.call("DELETE", `/user_groups/${g.id}`, { as }),
    ];
    for (const res of await Promise.all(attempts(org.member.as))) expectError(res, 400, "BAD_REQUEST", "Insufficient permission");
    // A recursive member (through a subgroup) is no direct member: still refused (guests are refused anyway).
    const viaSub = await newMember("via-sub");
    await t.ok(await t.call("POST", `/user_groups/${inner.id}/members`, { as: org.admin.as, params: { add: [viaSub.user_id] } }));
    await t.markOutbox();
    for (const res of await Promise.all(attempts(viaSub.as))) expectError(res, 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await t.call("PATCH", `/user_groups/${g.id}`, { as: guest.as, params: { name: "x" } }), 400, "BAD_REQUEST", "Not allowed for guest users");
    expect(await t.outbox()).toEqual([]);
    expect((await groups()).find((x) => x.id === g.id)).toMatchObject({ name: "not-mine", members: [org.member2.user_id], direct_subgroup_ids: [inner.id] });

    // A direct member may; so may a moderator or an administrator who is not in it.
    await t.ok(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member2.as, params: { description: "by a member" } }));
    await t.ok(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.moderator.as, params: { description: "by a moderator" } }));
    await t.ok(await t.call("POST", `/user_groups/${g.id}/members`, { as: org.admin.as, params: { add: [org.member.user_id] } }));
    // Once the creator is a member, they may too.
    await t.ok(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { name: "mine-now" } }));
  });
});

describe("system groups as subgroups (Zulip checks only the organization of a potential subgroup)", () => {
  it("a role group can be a subgroup: add_subgroups, recursive members and subgroups, then removal", async () => {
    const g = await create("with-roles", [org.member.user_id]);
    await t.markOutbox();
    await t.ok(await t.call("POST", `/user_groups/${g.id}/subgroups`, { as: org.member.as, params: { add: [sys["role:moderators"]] } }));
    expect((await t.outbox()).map((e) => UserGroupSubgroupsEvent.parse(e.payload.client.event))).toEqual([
      { type: "user_group", op: "add_subgroups", group_id: g.id, direct_subgroup_ids: [sys["role:moderators"]] },
    ]);
    const members = await t.ok(await t.call("GET", `/user_groups/${g.id}/members`, { as: org.member2.as }));
    expect(members.members).toEqual([org.owner.user_id, org.admin.user_id, org.moderator.user_id, org.member.user_id].sort(byId));
    const direct = await t.ok(await t.call("GET", `/user_groups/${g.id}/members`, { as: org.member2.as, params: { direct_member_only: true } }));
    expect(direct.members).toEqual([org.member.user_id]);
    const subs = await t.ok(await t.call("GET", `/user_groups/${g.id}/subgroups`, { as: org.member2.as }));
    expect(subs.subgroups.sort(byId)).toEqual([sys["role:owners"], sys["role:administrators"], sys["role:moderators"]].sort(byId));
    const directSubs = await t.ok(await t.call("GET", `/user_groups/${g.id}/subgroups`, { as: org.member2.as, params: { direct_subgroup_only: true } }));
    expect(directSubs.subgroups).toEqual([sys["role:moderators"]]);
    const isMember = (userId: number, direct: boolean) =>
      t.call("GET", `/user_groups/${g.id}/members/${userId}`, { as: org.member2.as, params: { direct_member_only: direct } });
    expect((await t.ok(await isMember(org.owner.user_id, false))).is_user_group_member).toBe(true);
    expect((await t.ok(await isMember(org.owner.user_id, true))).is_user_group_member).toBe(false);
    expect((await groups()).find((x) => x.id === g.id).direct_subgroup_ids).toEqual([sys["role:moderators"]]);

    await t.markOutbox();
    await t.ok(await t.call("POST", `/user_groups/${g.id}/subgroups`, { as: org.member.as, params: { delete: [sys["role:moderators"]] } }));
    expect((await t.outbox()).map((e) => UserGroupSubgroupsEvent.parse(e.payload.client.event))).toEqual([
      { type: "user_group", op: "remove_subgroups", group_id: g.id, direct_subgroup_ids: [sys["role:moderators"]] },
    ]);
    // A system group still takes no subgroups, and another organization's system group is unknown.
    const otherSys = (await t.ok(await t.call("GET", `/internal/realms/${other.realmId}`))).realm.system_groups;
    expectError(await t.call("POST", `/user_groups/${g.id}/subgroups`, { as: org.member.as, params: { add: [otherSys["role:members"]] } }), 400, "BAD_REQUEST", `Invalid user group ID: ${otherSys["role:members"]}`);
    expectError(await t.call("POST", `/user_groups/${sys["role:moderators"]}/subgroups`, { as: org.owner.as, params: { add: [g.id] } }), 400, "BAD_REQUEST", "Insufficient permission");
  });
});

describe("member changes", () => {
  it("removing an id that is no user of the organization is 'Invalid user ID', as adding is", async () => {
    const g = await create("removals", [org.member.user_id]);
    await t.markOutbox();
    const url = `/user_groups/${g.id}/members`;
    expectError(await t.call("POST", url, { as: org.member.as, params: { delete: [999999] } }), 400, "BAD_REQUEST", "Invalid user ID: 999999");
    expectError(await t.call("POST", url, { as: org.member.as, params: { delete: [other.member.user_id] } }), 400, "BAD_REQUEST", `Invalid user ID: ${other.member.user_id}`);
    // A user of the organization who is not in the group keeps Zulip's own text.
    expectError(await t.call("POST", url, { as: org.member.as, params: { delete: [org.member2.user_id] } }), 400, "BAD_REQUEST", `There is no member '${org.member2.user_id}' in this user group`);
    expect(await t.outbox()).toEqual([]);
    expect((await groups()).find((x) => x.id === g.id).members).toEqual([org.member.user_id]);
  });

  it("deactivated users cannot be added nor be initial members; bots can", async () => {
    const gone = await newMember("gone-user");
    await t.ok(await t.call("DELETE", `/users/${gone.user_id}`, { as: org.admin.as }));
    const post = (params: Record<string, unknown>) => t.call("POST", "/user_groups/create", { as: org.member.as, params: { description: "", ...params } });
    expectError(await post({ name: "with-gone", members: [org.member.user_id, gone.user_id] }), 400, "BAD_REQUEST", `Invalid user ID: ${gone.user_id}`);
    expect((await groups()).some((x) => x.name === "with-gone")).toBe(false);
    const g = await create("with-bot", [org.member.user_id, org.bot.user_id]);
    expect(g.members).toEqual([org.member.user_id, org.bot.user_id].sort(byId));
    expectError(await t.call("POST", `/user_groups/${g.id}/members`, { as: org.member.as, params: { add: [gone.user_id] } }), 400, "BAD_REQUEST", `Invalid user ID: ${gone.user_id}`);
  });

  it("GET /user_groups/{id}/members/{user_id} of another organization's user is 'No such user'", async () => {
    const g = await create("lookup", [org.member.user_id]);
    expectError(await t.call("GET", `/user_groups/${g.id}/members/${other.member.user_id}`, { as: org.member.as }), 400, "BAD_REQUEST", "No such user");
    expectError(await t.call("GET", `/user_groups/${g.id}/members/${org.member.user_id}`, { as: org.guest.as }), 400, "BAD_REQUEST", "Not allowed for guest users");
  });
});

describe("PATCH /user_groups/{id}", () => {
  it("sends one update event per changed field, as Zulip's separate name, description and setting changes", async () => {
    const g = await create("three-changes", [org.member.user_id]);
    await t.markOutbox();
    await t.ok(
      await t.call("PATCH", `/user_groups/${g.id}`, {
        as: org.member.as,
        params: { name: "three-changed", description: "all at once", can_mention_group: { new: sys["role:moderators"], old: sys["role:everyone"] } },
      }),
    );
    const events = await t.outbox();
    expect(events.map((e) => e.type)).toEqual(["accounts.user_group.updated", "accounts.user_group.updated", "accounts.user_group.updated"]);
    expect(events.map((e) => UserGroupUpdateEvent.parse(e.payload.client.event))).toEqual([
      { type: "user_group", op: "update", group_id: g.id, data: { name: "three-changed" } },
      { type: "user_group", op: "update", group_id: g.id, data: { description: "all at once" } },
      { type: "user_group", op: "update", group_id: g.id, data: { can_mention_group: sys["role:moderators"] } },
    ]);
    expect((await groups()).find((x) => x.id === g.id)).toMatchObject({ name: "three-changed", description: "all at once", can_mention_group: sys["role:moderators"] });
    // Only what changed is announced; nothing changed announces nothing.
    await t.ok(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { name: "three-changed", description: "only this" } }));
    expect((await t.outbox()).map((e) => e.payload.client.event)).toEqual([{ type: "user_group", op: "update", group_id: g.id, data: { description: "only this" } }]);
    await t.ok(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { name: "three-changed", description: "only this" } }));
    expect(await t.outbox()).toEqual([]);
  });

  it("names are unique as written: another case is another name, as in Zulip's unique (realm, name)", async () => {
    const lower = await create("casefold", []);
    const upper = await create("CaseFold", []);
    expect(upper.id).not.toBe(lower.id);
    expectError(await t.call("PATCH", `/user_groups/${upper.id}`, { as: org.admin.as, params: { name: "casefold" } }), 400, "BAD_REQUEST", "User group 'casefold' already exists.");
  });
});

describe("group mentions", () => {
  it("can_mention_group as a set of users and groups decides who may mention loudly; silent mentions need nothing", async () => {
    const channel = "mentions-audit";
    await m.createChannel(org.owner, channel, [org.admin, org.moderator, org.member, org.member2]);
    const crew = await create("crew", [org.member.user_id]);
    // A named role group as a subgroup: administrators (and owners) are mentioned through it.
    await t.ok(await t.call("POST", `/user_groups/${crew.id}/subgroups`, { as: org.member.as, params: { add: [sys["role:administrators"]] } }));
    const ship = await create("ship", [org.member2.user_id]);
    await t.ok(
      await t.call("PATCH", `/user_groups/${crew.id}`, {
        as: org.member.as,
        params: { can_mention_group: { new: { direct_members: [org.moderator.user_id], direct_subgroups: [ship.id] } } },
      }),
    );
    const send = (who: typeof org.member, content: string) => m.call("POST", "/messages", { as: who.as, params: { type: "stream", to: channel, topic: "crew", content } });
    expectError(await send(org.member, "hey @*crew*"), 400, "BAD_REQUEST", "You are not allowed to mention user group 'crew'.");
    expectError(await send(org.owner, "hey @*crew*"), 400, "BAD_REQUEST", "You are not allowed to mention user group 'crew'.");
    await t.ok(await send(org.member, "fyi @_*crew*"));
    // A direct member of the set, and a member of a group in it, may.
    await t.ok(await send(org.moderator, "from the moderator @*crew*"));
    await t.ok(await send(org.member2, "from the ship @*crew*"));
    const mine = (await m.messages(org.admin)).filter((x: any) => x.subject === "crew");
    expect(mine.map((x: any) => [x.content, x.flags.includes("mentioned")])).toEqual([
      ["fyi @_*crew*", false],
      ["from the moderator @*crew*", true],
      ["from the ship @*crew*", true],
    ]);
    // member2 (not in crew) is not mentioned by it.
    const theirs = (await m.messages(org.member2)).filter((x: any) => x.subject === "crew" && x.content.startsWith("from the moderator"));
    expect(theirs[0].flags).not.toContain("mentioned");
  });

  it("anyone may mention a group that role:everyone may mention, the organization's system bots too", async () => {
    const g = await create("open-mic", [org.member.user_id]);
    const can = async (groupId: number, userId: number) =>
      (await t.ok(await t.call("GET", "/internal/user_groups/can_mention", { params: { realm_id: org.realmId, group_id: groupId, user_id: userId } }))).can_mention;
    expect(notificationBotId).toBeGreaterThan(0);
    expect(await can(g.id, org.guest.user_id)).toBe(true);
    expect(await can(g.id, notificationBotId)).toBe(true);
    // Any narrower setting leaves system bots out: they are in no group.
    await t.ok(await t.call("PATCH", `/user_groups/${g.id}`, { as: org.member.as, params: { can_mention_group: { new: sys["role:members"] } } }));
    expect(await can(g.id, notificationBotId)).toBe(false);
    expect(await can(g.id, org.guest.user_id)).toBe(false);
    expect(await can(g.id, org.member2.user_id)).toBe(true);
  });
});

describe("member events", () => {
  it("add_members and remove_members carry only the users changed", async () => {
    const g = await create("evented", [org.member.user_id]);
    await t.markOutbox();
    await t.ok(await t.call("POST", `/user_groups/${g.id}/members`, { as: org.member.as, params: { add: [org.member2.user_id], delete: [org.member.user_id] } }));
    expect((await t.outbox()).map((e) => UserGroupMembersEvent.parse(e.payload.client.event))).toEqual([
      { type: "user_group", op: "add_members", group_id: g.id, user_ids: [org.member2.user_id] },
      { type: "user_group", op: "remove_members", group_id: g.id, user_ids: [org.member.user_id] },
    ]);
  });
});
