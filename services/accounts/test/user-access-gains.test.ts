import { PresenceEvent, UserStatusEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doNotifyUserAccessChanged } from "../src/actions/user-access";
import { systemGroupIds } from "../src/store/user-groups";
import type { Accounts, Org, TestUser } from "./helpers";
import { startAccountsWithMessaging, type WithMessaging } from "./messaging-peer";
import { notices, registerState, type Notice } from "./settings-kit";

/**
 * Where an organization limits guests (can_access_all_users_group set to role:members), a user
 * whose access to other users grows hears of each gained user as a fresh register would now show
 * them: `realm_user` / add, then their presence and status (a client need not register again); a
 * deactivated user gained by a role or setting change is added and then deactivated. A member who
 * becomes a guest stops seeing the deactivated users they share nothing with, in register and
 * through `realm_user` / remove. Messaging runs beside accounts (it knows who shares a channel or
 * a conversation with whom).
 */

let t: Accounts;
let m: WithMessaging;
/**
 * Limits guests. The member shares a channel with member2 and `kept` (deactivated since); `gone`
 * (deactivated) shares nothing with anyone. The guest shares nothing. The owner and member2 have a
 * status and a recent presence; the moderator a presence long ago.
 */
let o: Org;
let kept: TestUser;
let gone: TestUser;
let groups: Record<string, number>;

const ids = (users: Array<{ user_id: number }>) => users.map((u) => u.user_id).sort((a, b) => a - b);
const limit = async (on: boolean) =>
  t.ok(await t.call("PATCH", "/realm", { as: o.admin.as, params: { can_access_all_users_group: groups[on ? "role:members" : "role:everyone"] } }));
const setRole = async (who: TestUser, role: number) => t.ok(await t.call("PATCH", `/users/${who.user_id}`, { as: o.owner.as, params: { role } }));
const report = async (who: TestUser) => t.ok(await t.call("POST", "/users/me/presence", { as: who.as, params: { status: "active" } }));

async function newUser(name: string): Promise<TestUser> {
  const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: o.realmId, email: `${name.toLowerCase()}@${o.slug}.test`, full_name: name, role: 400 } }));
  return { ...u, role: 400, realm_id: o.realmId, as: t.identity({ ...u, role: 400, realm_id: o.realmId }) };
}

/** The events to `who` about users they gained or lost, each checked against its contract, in order. */
async function accessEvents(who: TestUser): Promise<Array<Record<string, any>>> {
  const sent = (await notices(t)).filter((n: Notice) => n.type === "accounts.user_access.changed");
  for (const n of sent) expect(n.users).toEqual([who.user_id]);
  for (const { event } of sent) {
    if (event.type === "presence") PresenceEvent.parse(event);
    if (event.type === "user_status") UserStatusEvent.parse(event);
  }
  return sent.map((n) => n.event);
}

/** Per user, the kinds of events about them (realm_user add/update/remove, presence, user_status), in order. */
function kindsByUser(events: Array<Record<string, any>>): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const e of events) {
    const id = e.type === "realm_user" ? e.person.user_id : e.user_id;
    out.set(id, [...(out.get(id) ?? []), e.type === "realm_user" ? `${e.op}${e.op === "update" ? `:${Object.keys(e.person).filter((k) => k !== "user_id")}` : ""}` : e.type]);
  }
  return out;
}

/** A fresh register's presence (legacy format, by email), status and user lists for `who`. */
async function fresh(who: TestUser, incomplete = true) {
  return registerState(t, who.as, {
    fetch_event_types: ["realm_user", "presence", "user_status"],
    client_gravatar: false,
    client_capabilities: { user_list_incomplete: incomplete },
  });
}

/** What the gained users' presence and status events say, in register's form: they must equal a fresh register's. */
function asRegister(events: Array<Record<string, any>>, emails: Map<number, string>) {
  const presences: Record<string, unknown> = {};
  const statuses: Record<string, unknown> = {};
  for (const e of events) {
    if (e.type === "presence") presences[emails.get(e.user_id)!] = { aggregated: { client: "website", status: e.presence.website.status, timestamp: e.presence.website.timestamp }, ...e.presence };
    if (e.type === "user_status") {
      const { type: _t, user_id, ...status } = e;
      statuses[String(user_id)] = status;
    }
  }
  return { presences, statuses };
}

beforeAll(async () => {
  m = await startAccountsWithMessaging();
  t = m.t;
  o = await t.createOrg();
  groups = await systemGroupIds(t.pool, o.realmId);
  kept = await newUser("Keeper");
  gone = await newUser("Gonzo");
  // The member creates the channel (and so is in it); the admin's default channels are none.
  await m.createChannel(o.member, "pair", [o.member2, kept]);
  for (const u of [kept, gone]) await t.ok(await t.call("DELETE", `/users/${u.user_id}`, { as: o.admin.as }));
  // Long ago: outside register's presence history, so nobody is told of it on a gain.
  await report(o.moderator);
  t.clock.advance(20 * 86_400_000);
  await report(o.owner);
  await report(o.member2);
  await t.ok(await t.call("POST", "/users/me/status", { as: o.owner.as, params: { status_text: "Owning", emoji_name: "car" } }));
  await t.ok(await t.call("POST", "/users/me/status", { as: o.member2.as, params: { status_text: "Pairing" } }));
  await limit(true);
});
afterAll(async () => {
  await m?.close();
});

const emailsOf = () => new Map([o.owner, o.admin, o.moderator, o.member, o.member2, o.guest, kept, gone].map((u) => [u.user_id, u.email]));

describe("gaining users: realm_user add, then presence and status as a fresh register shows them", () => {
  it("messaging's finding (a shared channel, a first conversation): the gained users' presence and status follow each add; deactivated users are left out", async () => {
    await t.markOutbox();
    await doNotifyUserAccessChanged(t.deps, o.realmId, { gained: [{ user_id: o.guest.user_id, user_ids: [o.owner.user_id, o.admin.user_id, o.moderator.user_id, gone.user_id] }], lost: [] });
    const events = await accessEvents(o.guest);
    expect(kindsByUser(events)).toEqual(
      new Map([
        [o.owner.user_id, ["add", "presence", "user_status"]],
        [o.admin.user_id, ["add"]],
        [o.moderator.user_id, ["add"]],
      ]),
    );
    // The status as a member's register shows it (every non-default field).
    const shown = (await fresh(o.admin)).user_status[o.owner.user_id];
    expect(shown).toMatchObject({ status_text: "Owning", emoji_name: "car" });
    expect(events.find((e) => e.type === "user_status")).toEqual({ type: "user_status", user_id: o.owner.user_id, ...shown });
    // The guest does not access them in fact (nothing is shared): register shows none of that.
    const state = await fresh(o.guest);
    expect(state.user_status).toEqual({});
    expect(Object.keys(state.presences)).toEqual([]);
  });

  it("with CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE off the guest had every presence already: only the status follows", async () => {
    t.deps.config.CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE = false;
    try {
      await t.markOutbox();
      await doNotifyUserAccessChanged(t.deps, o.realmId, { gained: [{ user_id: o.guest.user_id, user_ids: [o.owner.user_id] }], lost: [] });
      expect(kindsByUser(await accessEvents(o.guest))).toEqual(new Map([[o.owner.user_id, ["add", "user_status"]]]));
    } finally {
      t.deps.config.CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE = true;
    }
  });

  it("the setting back to role:everyone: the guest gains everyone, deactivated users too, and the events bring it to what a fresh register shows", async () => {
    const before = await fresh(o.guest);
    await t.markOutbox();
    await limit(false);
    const events = await accessEvents(o.guest);
    expect(kindsByUser(events)).toEqual(
      new Map([
        [o.owner.user_id, ["add", "presence", "user_status"]],
        [o.admin.user_id, ["add"]],
        [o.moderator.user_id, ["add"]],
        [o.member.user_id, ["add"]],
        [o.member2.user_id, ["add", "presence", "user_status"]],
        [kept.user_id, ["add", "update:is_active"]],
        [gone.user_id, ["add", "update:is_active"]],
      ]),
    );
    const after = await fresh(o.guest);
    const told = asRegister(events, emailsOf());
    expect({ ...before.presences, ...told.presences }).toEqual(after.presences);
    expect({ ...before.user_status, ...told.statuses }).toEqual(after.user_status);
    expect(ids(after.realm_non_active_users)).toEqual(ids([kept, gone]));
    for (const e of events.filter((x) => x.op === "update")) expect(e.person).toEqual({ user_id: e.person.user_id, is_active: false });
    await limit(true);
  });
});

describe("a member who becomes a guest, and a member again", () => {
  it("register no longer lists the deactivated users it shares nothing with; a realm_user remove tells the client, as for the active ones", async () => {
    const asMember = await fresh(o.member);
    expect(ids(asMember.realm_non_active_users)).toEqual(ids([kept, gone]));
    await t.markOutbox();
    await setRole(o.member, 600);
    const events = await accessEvents(o.member);
    expect(events).toEqual(
      [o.owner, o.admin, o.moderator, o.guest, gone].map((u) => ({ type: "realm_user", op: "remove", person: { user_id: u.user_id, full_name: "Unknown user" } })),
    );
    // The deactivated user it shares a channel with stays listed.
    expect(ids((await fresh(o.member)).realm_non_active_users)).toEqual(ids([kept]));
    const complete = await fresh(o.member, false);
    expect(ids(complete.realm_non_active_users)).toEqual(ids([kept]));
    expect(complete.realm_users.find((u: any) => u.user_id === gone.user_id)).toMatchObject({ full_name: "Unknown user", is_active: true });
  });

  it("a member again: each of them is added, the deactivated one then deactivated, with presence and status after the adds as register shows them", async () => {
    const before = await fresh(o.member);
    await t.markOutbox();
    await setRole(o.member, 400);
    const events = await accessEvents(o.member);
    expect(kindsByUser(events)).toEqual(
      new Map([
        [o.owner.user_id, ["add", "presence", "user_status"]],
        [o.admin.user_id, ["add"]],
        [o.moderator.user_id, ["add"]],
        [o.guest.user_id, ["add"]],
        [gone.user_id, ["add", "update:is_active"]],
      ]),
    );
    const after = await fresh(o.member);
    const told = asRegister(events, emailsOf());
    expect({ ...before.presences, ...told.presences }).toEqual(after.presences);
    expect({ ...before.user_status, ...told.statuses }).toEqual(after.user_status);
    expect(ids(after.realm_non_active_users)).toEqual(ids([kept, gone]));
    // The deactivated user as register lists them.
    const gained = events.find((e) => e.op === "add" && e.person.user_id === gone.user_id)!;
    expect(gained.person).toEqual(after.realm_non_active_users.find((u: any) => u.user_id === gone.user_id));
  });
});
