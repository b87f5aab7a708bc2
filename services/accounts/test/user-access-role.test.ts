import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemGroupIds } from "../src/store/user-groups";
import type { Accounts, Org, TestUser } from "./helpers";
import { startAccountsWithMessaging, type WithMessaging } from "./messaging-peer";
import { notices, registerState, type Notice } from "./settings-kit";

/**
 * What a user accesses changes with their role where the organization limits guests
 * (can_access_all_users_group set to role:members), and for every guest when an administrator
 * changes the setting: their clients hear of each user they lose (`realm_user` / remove) or gain
 * (`realm_user` / add, the user as they now see them), so that they agree with a fresh register.
 * Messaging runs beside accounts (it knows who shares a channel or a conversation with whom).
 */

let t: Accounts;
let m: WithMessaging;
/** Limits guests: member2 shares a channel with the member; the guest shares nothing with anyone. */
let o: Org;
/** Does not limit guests. */
let open: Org;
let groups: Record<string, number>;

beforeAll(async () => {
  m = await startAccountsWithMessaging();
  t = m.t;
  [o, open] = [await t.createOrg(), await t.createOrg()];
  await m.createChannel(o.member, "pair", [o.member2]);
  groups = await systemGroupIds(t.pool, o.realmId);
  await limit(true);
});
afterAll(async () => {
  await m?.close();
});

const ids = (users: Array<{ user_id: number }>) => users.map((u) => u.user_id).sort((a, b) => a - b);
const limit = async (on: boolean) =>
  t.ok(await t.call("PATCH", "/realm", { as: o.admin.as, params: { can_access_all_users_group: groups[on ? "role:members" : "role:everyone"] } }));
const setRole = async (who: TestUser, role: number) => t.ok(await t.call("PATCH", `/users/${who.user_id}`, { as: o.owner.as, params: { role } }));
/** The realm_user add and remove events to exactly one user, in order. */
const accessEvents = (sent: Notice[]) => sent.filter((n) => n.event.type === "realm_user" && n.event.op !== "update");
/** A fresh register's users (it reads the role afresh), for a client without user_list_incomplete (stand-ins) or with it (none). */
const registered = async (who: TestUser, incomplete: boolean) =>
  (await registerState(t, who.as, { fetch_event_types: ["realm_user"], client_gravatar: false, client_capabilities: { user_list_incomplete: incomplete } }))
    .realm_users as Array<{ user_id: number } & Record<string, any>>;

describe("a role change in an organization that limits guests", () => {
  let others: TestUser[];
  beforeAll(() => {
    others = [o.owner, o.admin, o.moderator, o.guest];
  });

  it("a member who becomes a guest loses every human they share nothing with (bots and channel partners stay), as register then shows", async () => {
    await t.markOutbox();
    // Changes between other roles, and any change where guests are not limited, send none.
    await setRole(o.member2, 300);
    await setRole(o.member2, 400);
    await t.ok(await t.call("PATCH", `/users/${open.member2.user_id}`, { as: open.owner.as, params: { role: 600 } }));
    await t.ok(await t.call("PATCH", `/users/${open.member2.user_id}`, { as: open.owner.as, params: { role: 400 } }));
    expect(accessEvents(await notices(t))).toEqual([]);
    await setRole(o.member2, 600);
    const sent = accessEvents(await notices(t));
    expect(sent.map((n) => [n.type, n.event, n.users])).toEqual(
      others.map((u) => ["accounts.user_access.changed", { type: "realm_user", op: "remove", person: { user_id: u.user_id, full_name: "Unknown user" } }, [o.member2.user_id]]),
    );
    expect(ids(await registered(o.member2, true))).toEqual(ids([o.member, o.member2, o.bot]));
    const complete = await registered(o.member2, false);
    expect(ids(complete.filter((u) => u.full_name === "Unknown user"))).toEqual(ids(others));
  });

  it("a guest who becomes a member again gains them, each as a member's register shows them", async () => {
    await t.markOutbox();
    await setRole(o.member2, 400);
    const sent = accessEvents(await notices(t));
    expect(sent.map((n) => [n.event.op, n.event.person.user_id, n.users])).toEqual(others.map((u) => ["add", u.user_id, [o.member2.user_id]]));
    const fresh = new Map((await registered(o.member2, true)).map((u) => [u.user_id, u]));
    for (const n of sent) expect(n.event.person).toEqual(fresh.get(n.event.person.user_id));
    expect([...fresh.values()].some((u) => u.full_name === "Unknown user")).toBe(false);
  });
});

describe("can_access_all_users_group changed by an administrator", () => {
  const humans = () => [o.owner, o.admin, o.moderator, o.member, o.member2];

  it("back to role:everyone: each guest gains every human it shared nothing with, as its register then shows them; nobody else hears more", async () => {
    await t.markOutbox();
    await limit(false);
    const sent = accessEvents(await notices(t));
    expect(sent.map((n) => [n.event.op, n.event.person.user_id, n.users])).toEqual(humans().map((u) => ["add", u.user_id, [o.guest.user_id]]));
    const fresh = new Map((await registered(o.guest, true)).map((u) => [u.user_id, u]));
    for (const n of sent) expect(n.event.person).toEqual(fresh.get(n.event.person.user_id));
  });

  it("role:members again: each guest loses them again, as its register then shows", async () => {
    await t.markOutbox();
    await limit(true);
    const sent = accessEvents(await notices(t));
    expect(sent.map((n) => [n.event, n.users])).toEqual(
      humans().map((u) => [{ type: "realm_user", op: "remove", person: { user_id: u.user_id, full_name: "Unknown user" } }, [o.guest.user_id]]),
    );
    expect(ids(await registered(o.guest, true))).toEqual(ids([o.guest, o.bot]));
  });
});
