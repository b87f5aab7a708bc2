import { MutedUsersEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";
import { notices, registerState } from "./settings-kit";

/**
 * POST/DELETE /users/me/muted_users/{id} as Zulip's mute_user/unmute_user views answer them, the
 * muted_users event each change sends to the user's own queues, and register's muted_users.
 */
let t: Accounts;
let org: Org;
let other: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  other = await t.createOrg();
});
afterAll(() => t?.close());

type Who = Org["member"];
const mute = (as: Who, id: number) => t.call("POST", `/users/me/muted_users/${id}`, { as: as.as });
const unmute = (as: Who, id: number) => t.call("DELETE", `/users/me/muted_users/${id}`, { as: as.as });
const registered = async (as: Who) => (await registerState(t, as.as, { fetch_event_types: ["muted_users"] })).muted_users;
const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** The muted_users events written since the last call, each checked against its contract. */
async function mutedUsersNotices() {
  const got = await notices(t);
  for (const n of got) expect(MutedUsersEvent.safeParse(n.event).success, JSON.stringify(n.event)).toBe(true);
  return got.map((n) => ({ type: n.type, event: n.event, users: n.users }));
}

describe("muting users", () => {
  it("starts with nobody muted", async () => {
    expect(await registered(org.member)).toEqual([]);
  });

  it("mutes a user: an empty success, the whole list (with when) to the user's own queues, and in register", async () => {
    await t.markOutbox();
    const first = t.clock.now();
    const res = await mute(org.member, org.member2.user_id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "" });
    t.clock.advance(90_000);
    const second = t.clock.now();
    await t.ok(await mute(org.member, org.admin.user_id));

    const one = { id: org.member2.user_id, timestamp: seconds(first) };
    const both = [one, { id: org.admin.user_id, timestamp: seconds(second) }];
    expect(await mutedUsersNotices()).toEqual([
      { type: "accounts.muted_users.changed", event: { type: "muted_users", muted_users: [one] }, users: [org.member.user_id] },
      { type: "accounts.muted_users.changed", event: { type: "muted_users", muted_users: both }, users: [org.member.user_id] },
    ]);
    expect(await registered(org.member)).toEqual(both);
    // Each user has their own list; the muted user is told nothing.
    expect(await registered(org.member2)).toEqual([]);
  });

  it("carries a growing version for messaging's replica", async () => {
    await t.markOutbox();
    await t.ok(await mute(org.member2, org.member.user_id));
    await t.ok(await unmute(org.member2, org.member.user_id));
    const rows = await t.outbox();
    expect(rows.map((r) => r.payload.muted_users)).toEqual([[{ id: org.member.user_id, timestamp: seconds(t.clock.now()) }], []]);
    expect(rows[0].payload.user_id).toBe(org.member2.user_id);
    expect(rows[1].payload.version).toBeGreaterThan(rows[0].payload.version);
  });

  it("mutes bots (since feature level 188) and deactivated users, as Zulip allows", async () => {
    await t.ok(await t.call("DELETE", `/users/${org.moderator.user_id}`, { as: org.admin.as }));
    await t.markOutbox();
    await t.ok(await mute(org.guest, org.bot.user_id));
    await t.ok(await mute(org.guest, org.moderator.user_id));
    expect((await registered(org.guest)).map((m: { id: number }) => m.id)).toEqual([org.bot.user_id, org.moderator.user_id]);
    // A deactivated user can also be unmuted.
    await t.ok(await unmute(org.guest, org.moderator.user_id));
    expect((await mutedUsersNotices()).map((n) => n.event.muted_users.map((m: { id: number }) => m.id))).toEqual([
      [org.bot.user_id],
      [org.bot.user_id, org.moderator.user_id],
      [org.bot.user_id],
    ]);
  });

  it("refuses with Zulip's errors and changes nothing", async () => {
    await t.markOutbox();
    const before = await registered(org.member);
    const notificationBot = (await t.ok(await t.call("GET", `/internal/realms/${org.realmId}`))).realm.notification_bot_id;

    expectError(await mute(org.member, org.member.user_id), 400, "BAD_REQUEST", "Cannot mute self");
    expectError(await mute(org.member, org.member2.user_id), 400, "BAD_REQUEST", "User already muted");
    expectError(await mute(org.member, 999_999_999), 400, "BAD_REQUEST", "No such user");
    // Another organization's user, and the notification bot (Zulip's live in their own realm).
    expectError(await mute(org.member, other.member.user_id), 400, "BAD_REQUEST", "No such user");
    expectError(await mute(org.member, notificationBot), 400, "BAD_REQUEST", "No such user");

    expectError(await unmute(org.member, org.owner.user_id), 400, "BAD_REQUEST", "User is not muted");
    expectError(await unmute(org.member, org.member.user_id), 400, "BAD_REQUEST", "User is not muted");
    expectError(await unmute(org.member, 999_999_999), 400, "BAD_REQUEST", "No such user");
    expectError(await unmute(org.member, other.member.user_id), 400, "BAD_REQUEST", "No such user");
    // Someone else muting the same user is not "already muted".
    expectError(await unmute(org.member2, org.admin.user_id), 400, "BAD_REQUEST", "User is not muted");

    expect(await mutedUsersNotices()).toEqual([]);
    expect(await registered(org.member)).toEqual(before);
  });

  it("unmutes: the remaining list to the user's queues and in register; muting again gets a new timestamp", async () => {
    await t.markOutbox();
    await t.ok(await unmute(org.member, org.member2.user_id));
    const remaining = [{ id: org.admin.user_id, timestamp: expect.any(Number) }];
    expect(await mutedUsersNotices()).toEqual([
      { type: "accounts.muted_users.changed", event: { type: "muted_users", muted_users: remaining }, users: [org.member.user_id] },
    ]);
    expect(await registered(org.member)).toEqual(remaining);

    t.clock.advance(60_000);
    await t.ok(await mute(org.member, org.member2.user_id));
    expect(await registered(org.member)).toEqual([...remaining, { id: org.member2.user_id, timestamp: seconds(t.clock.now()) }]);
  });

  it("leaves muted_users out of register unless asked for", async () => {
    const state = await registerState(t, org.member.as, { fetch_event_types: ["alert_words"] });
    expect(state).not.toHaveProperty("muted_users");
    expect((await registerState(t, org.member.as, {})).muted_users).toHaveLength(2);
  });
});
