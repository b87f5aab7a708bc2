import { UserGroupUpdateEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, type Accounts, type Org } from "./helpers";
import { startAccountsWithMessaging, type WithMessaging } from "./messaging-peer";

/**
 * POST /user_groups/{id}/deactivate and what a deactivated group is afterwards, as Zulip 10 has
 * it (feature levels 290-298): listed only when asked for, unusable, renamable.
 */

let t: Accounts;
let org: Org;
let other: Org;
let sys: Record<string, number>;
let m: WithMessaging;

beforeAll(async () => {
  m = await startAccountsWithMessaging();
  t = m.t;
  org = await t.createOrg();
  other = await t.createOrg();
  sys = (await t.ok(await t.call("GET", `/internal/realms/${org.realmId}`))).realm.system_groups;
});
afterAll(async () => {
  await m?.close();
});

async function groups(params: Record<string, unknown> = {}, as = org.member.as) {
  return (await t.ok(await t.call("GET", "/user_groups", { as, params }))).user_groups as any[];
}
async function create(name: string, members: number[] = [org.member.user_id], extra: Record<string, unknown> = {}, as = org.member.as): Promise<number> {
  await t.ok(await t.call("POST", "/user_groups/create", { as, params: { name, description: `${name} team`, members, ...extra } }));
  return (await groups({ include_deactivated_groups: true })).find((g) => g.name === name).id;
}
const deactivate = (id: number, as = org.member.as) => t.call("POST", `/user_groups/${id}/deactivate`, { as });
const everyone = () => [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest, org.bot].map((u) => u.user_id).sort((a, b) => a - b);

describe("POST /user_groups/{user_group_id}/deactivate", () => {
  it("deactivates; everyone active in the organization gets the update with deactivated: true", async () => {
    const id = await create("retiring", [org.member.user_id, org.member2.user_id]);
    await t.markOutbox();
    const body = await t.ok(await deactivate(id));
    expect(Object.keys(body).sort()).toEqual(["msg", "result"]);
    const events = await t.outbox();
    expect(events.map((e) => e.type)).toEqual(["accounts.user_group.updated"]);
    const { event, users, ...notice } = events[0].payload.client;
    expect(UserGroupUpdateEvent.parse(event)).toEqual({ type: "user_group", op: "update", group_id: id, data: { deactivated: true } });
    expect(notice).toEqual({});
    expect([...users].sort((a: number, b: number) => a - b)).toEqual(everyone());
    expect(events[0].realm_id).toBe(org.realmId);
  });

  it("GET /user_groups lists deactivated groups only with include_deactivated_groups (allow_deactivated before)", async () => {
    const id = await create("listed-then-not");
    await t.ok(await deactivate(id));
    expect((await groups()).some((g) => g.id === id)).toBe(false);
    expect((await groups({ include_deactivated_groups: false })).some((g) => g.id === id)).toBe(false);
    for (const params of [{ include_deactivated_groups: true }, { allow_deactivated: true }]) {
      const all = await groups(params);
      expect(all.find((g) => g.id === id)).toMatchObject({ name: "listed-then-not", members: [org.member.user_id], deactivated: true });
      expect(all.filter((g) => g.is_system_group).every((g) => g.deactivated === false)).toBe(true);
    }
    expect((await groups({ include_deactivated_groups: true }, other.owner.as)).some((g) => g.id === id)).toBe(false);
  });

  it("register lists them for clients with the include_deactivated_groups capability only", async () => {
    const id = await create("register-sees");
    await t.ok(await deactivate(id));
    const state = async (caps: Record<string, boolean>) =>
      (await t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.member2.as, params: { fetch_event_types: ["realm_user_groups"], client_capabilities: caps } })))
        .realm_user_groups as any[];
    expect((await state({})).some((g) => g.id === id)).toBe(false);
    expect((await state({ include_deactivated_groups: false })).some((g) => g.id === id)).toBe(false);
    expect((await state({ include_deactivated_groups: true })).find((g) => g.id === id)).toMatchObject({ deactivated: true, members: [org.member.user_id] });
  });

  it("who may: whoever may change the group; never a system group, another organization's or a deactivated one", async () => {
    const id = await create("guarded", [org.member.user_id]);
    expectError(await deactivate(id, org.member2.as), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await deactivate(id, org.guest.as), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await deactivate(id, org.bot.as), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    expectError(await deactivate(id, other.owner.as), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await deactivate(987654321, org.owner.as), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await deactivate(sys["role:members"], org.owner.as), 400, "BAD_REQUEST", "Insufficient permission");
    expect((await groups()).some((g) => g.id === id)).toBe(true);
    // A moderator may (as for any change to a group), and only once.
    await t.ok(await deactivate(id, org.moderator.as));
    await t.markOutbox();
    expectError(await deactivate(id, org.owner.as), 400, "BAD_REQUEST", "User group is deactivated.");
    expect(await t.outbox()).toEqual([]);
  });

  it("refuses a group in use, listing every use (CANNOT_DEACTIVATE_GROUP_IN_USE)", async () => {
    const used = await create("in-use");
    const parent = await create("parent-of-used");
    await t.ok(await t.call("POST", `/user_groups/${parent}/subgroups`, { as: org.member.as, params: { add: [used] } }));
    // With the member in them: a group's creator has no right to it as such (Zulip 9).
    const mentionedBy = await create("mentioned-by-used", [org.member.user_id], { can_mention_group: used });
    const anonymous = await create("anonymous-use", [org.member.user_id], { can_mention_group: { direct_members: [org.member2.user_id], direct_subgroups: [used] } });
    // Channels whose subscribers may be removed by the group, and one left to the administrators.
    const channel = await m.createChannel(org.admin, "removable-by-used", [], { can_remove_subscribers_group: used });
    await m.createChannel(org.admin, "removable-by-admins", [], { can_remove_subscribers_group: sys["role:administrators"] });
    await t.markOutbox();
    const res = await deactivate(used);
    expectError(res, 400, "CANNOT_DEACTIVATE_GROUP_IN_USE", "Cannot deactivate user group in use.");
    expect(res.body.objections).toEqual([
      { type: "subgroup", supergroup_ids: [parent] },
      { type: "channel", channel_id: channel, settings: ["can_remove_subscribers_group"] },
      { type: "user_group", group_id: mentionedBy, settings: ["can_mention_group"] },
      { type: "user_group", group_id: anonymous, settings: ["can_mention_group"] },
    ]);
    expect(Object.keys(res.body).sort()).toEqual(["code", "msg", "objections", "result"]);
    expect(await t.outbox()).toEqual([]);
    expect((await groups()).some((g) => g.id === used)).toBe(true);
    // Uses by deactivated groups do not count; the channel's does until it changes.
    await t.ok(await t.call("POST", `/user_groups/${parent}/subgroups`, { as: org.member.as, params: { delete: [used] } }));
    await t.ok(await deactivate(mentionedBy));
    await t.ok(await deactivate(anonymous));
    expect((await deactivate(used)).body.objections).toEqual([{ type: "channel", channel_id: channel, settings: ["can_remove_subscribers_group"] }]);
    await t.ok(await m.call("PATCH", `/streams/${channel}`, { as: org.admin.as, params: { can_remove_subscribers_group: { new: sys["role:administrators"], old: used } } }));
    await t.ok(await deactivate(used));
  });

  it("a group whose own setting names itself is not in use for that", async () => {
    const id = await create("self-mention");
    await t.ok(await t.call("PATCH", `/user_groups/${id}`, { as: org.member.as, params: { can_mention_group: id } }));
    await t.ok(await deactivate(id));
  });
});

describe("a deactivated group", () => {
  it("takes no members, subgroups or uses, and answers 'User group is deactivated.'", async () => {
    const gone = await create("gone");
    const live = await create("live");
    await t.ok(await deactivate(gone));
    const msg = "User group is deactivated.";
    expectError(await t.call("POST", `/user_groups/${gone}/members`, { as: org.owner.as, params: { add: [org.member2.user_id] } }), 400, "BAD_REQUEST", msg);
    expectError(await t.call("POST", `/user_groups/${gone}/members`, { as: org.owner.as, params: { delete: [org.member.user_id] } }), 400, "BAD_REQUEST", msg);
    expectError(await t.call("POST", `/user_groups/${gone}/subgroups`, { as: org.owner.as, params: { add: [live] } }), 400, "BAD_REQUEST", msg);
    expectError(await t.call("POST", `/user_groups/${live}/subgroups`, { as: org.owner.as, params: { add: [gone] } }), 400, "BAD_REQUEST", msg);
    expectError(await t.call("PATCH", `/user_groups/${live}`, { as: org.owner.as, params: { can_mention_group: gone } }), 400, "BAD_REQUEST", msg);
    expectError(await t.call("PATCH", `/user_groups/${live}`, { as: org.owner.as, params: { can_mention_group: { direct_members: [], direct_subgroups: [gone, live] } } }), 400, "BAD_REQUEST", msg);
    expectError(await t.call("POST", "/user_groups/create", { as: org.owner.as, params: { name: "uses-gone", description: "", members: [], can_mention_group: gone } }), 400, "BAD_REQUEST", msg);
    // Reading it still works; other services no longer see it (mentions, channel settings).
    expect((await t.ok(await t.call("GET", `/user_groups/${gone}/members`, { as: org.member2.as }))).members).toEqual([org.member.user_id]);
    const internal = (await t.ok(await t.call("GET", "/internal/user_groups", { params: { realm_id: org.realmId } }))).user_groups as any[];
    expect(internal.some((g) => g.id === gone)).toBe(false);
    expect(internal.some((g) => g.id === live)).toBe(true);
    // Its name stays taken.
    expectError(await t.call("POST", "/user_groups/create", { as: org.owner.as, params: { name: "gone", description: "", members: [] } }), 400, "BAD_REQUEST", "User group 'gone' already exists.");
  });

  it("can be renamed: the update reaches only clients that list deactivated groups; other changes reach everyone", async () => {
    const id = await create("to-rename");
    await t.ok(await deactivate(id));
    await t.markOutbox();
    await t.ok(await t.call("PATCH", `/user_groups/${id}`, { as: org.member.as, params: { name: "renamed-while-off" } }));
    await t.ok(await t.call("PATCH", `/user_groups/${id}`, { as: org.member.as, params: { description: "still off" } }));
    const [renamed, described] = (await t.outbox()).map((e) => e.payload.client);
    expect(renamed).toMatchObject({ event: { type: "user_group", op: "update", group_id: id, data: { name: "renamed-while-off" } }, capability: "include_deactivated_groups" });
    expect(described.event).toEqual({ type: "user_group", op: "update", group_id: id, data: { description: "still off" } });
    expect(described).not.toHaveProperty("capability");
    expect((await groups({ include_deactivated_groups: true })).find((g) => g.id === id)).toMatchObject({ name: "renamed-while-off", description: "still off", deactivated: true });
    // An active group's rename reaches everyone.
    const live = await create("live-rename");
    await t.markOutbox();
    await t.ok(await t.call("PATCH", `/user_groups/${live}`, { as: org.member.as, params: { name: "live-renamed" } }));
    expect((await t.outbox())[0].payload.client).not.toHaveProperty("capability");
  });
});
