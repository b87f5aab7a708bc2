import { RealmUserUpdateEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";

let t: Accounts;
let org: Org;
let other: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  other = await t.createOrg();
});
afterAll(() => t?.close());

const HEX = "a1b2c3d4e5f60718293a4b5c6d7e8f90";

describe("push tokens", () => {
  it("registers and removes GCM and APNs tokens; removing twice says the token is gone", async () => {
    await t.ok(await t.call("POST", "/users/me/android_gcm_reg_id", { as: org.member.as, params: { token: "gcm-token-1" } }));
    await t.ok(await t.call("POST", "/users/me/android_gcm_reg_id", { as: org.member.as, params: { token: "gcm-token-1" } }));
    await t.ok(await t.call("POST", "/users/me/apns_device_token", { as: org.member.as, params: { token: HEX, appid: "org.zulip.Zulip" } }));
    const { rows } = await t.pool.query("SELECT kind, token FROM push_device_tokens WHERE user_id = $1 ORDER BY kind", [org.member.user_id]);
    expect(rows).toEqual([{ kind: 1, token: HEX }, { kind: 2, token: "gcm-token-1" }]);
    await t.ok(await t.call("DELETE", "/users/me/android_gcm_reg_id", { as: org.member.as, params: { token: "gcm-token-1" } }));
    expectError(await t.call("DELETE", "/users/me/android_gcm_reg_id", { as: org.member.as, params: { token: "gcm-token-1" } }), 400, "BAD_REQUEST", "Token does not exist");
    await t.ok(await t.call("DELETE", "/users/me/apns_device_token", { as: org.member.as, params: { token: HEX } }));
  });

  it("takes any APNs token Python's base64 decoding accepts, as Zulip does (the OpenAPI example too)", async () => {
    const apns = (method: "POST" | "DELETE", token: string) => t.call(method, "/users/me/apns_device_token", { as: org.member2.as, params: { token, appid: "org.zulip.Zulip" } });
    for (const token of ["apple-tokenbb", "ab==", "abc=", "ab==junk", "QUJD REVG", HEX.toUpperCase()]) await t.ok(await apns("POST", token));
    const { rows } = await t.pool.query("SELECT token FROM push_device_tokens WHERE user_id = $1 AND kind = 1 ORDER BY id", [org.member2.user_id]);
    expect(rows.map((r) => r.token)).toEqual(["apple-tokenbb", "ab==", "abc=", "ab==junk", "QUJD REVG", HEX.toUpperCase()]);
    await t.ok(await apns("DELETE", "apple-tokenbb"));
    expectError(await apns("DELETE", "apple-tokenbb"), 400, "BAD_REQUEST", "Token does not exist");
    expectError(await apns("POST", ""), 400, "BAD_REQUEST", "Empty or invalid length token");
    expectError(await apns("POST", "a".repeat(4097)), 400, "BAD_REQUEST", "Empty or invalid length token");
  });

  it("refuses empty and over-long tokens, another user's token and bots (spec 4.18)", async () => {
    const del = (as: any, token: string) => t.call("DELETE", "/users/me/android_gcm_reg_id", { as, params: { token } });
    expectError(await del(org.member.as, ""), 400, "BAD_REQUEST", "Empty or invalid length token");
    expectError(await del(org.member.as, "x".repeat(4097)), 400, "BAD_REQUEST", "Empty or invalid length token");
    expectError(await del(org.member.as, "😀".repeat(4097)), 400, "BAD_REQUEST", "Empty or invalid length token");
    // 4096 characters are within the limit (an emoji counts once): only unknown.
    expectError(await del(org.member.as, "😀".repeat(4096)), 400, "BAD_REQUEST", "Token does not exist");
    expectError(await t.call("DELETE", "/users/me/android_gcm_reg_id", { as: org.member.as }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'token' argument");
    await t.ok(await t.call("POST", "/users/me/android_gcm_reg_id", { as: org.member2.as, params: { token: "theirs" } }));
    await t.ok(await t.call("POST", "/users/me/android_gcm_reg_id", { as: other.member.as, params: { token: "other-org" } }));
    expectError(await del(org.member.as, "theirs"), 400, "BAD_REQUEST", "Token does not exist");
    expectError(await del(org.member.as, "other-org"), 400, "BAD_REQUEST", "Token does not exist");
    await t.ok(await del(org.member2.as, "theirs"));
    expectError(await t.call("POST", "/users/me/android_gcm_reg_id", { as: org.member.as, params: { token: "" } }), 400, "BAD_REQUEST", "Empty or invalid length token");
    expectError(await t.call("POST", "/users/me/apns_device_token", { as: org.member.as, params: { token: "not hex!", appid: "org.zulip.Zulip" } }), 400, "BAD_REQUEST", "Invalid APNS token");
    expectError(await t.call("POST", "/users/me/apns_device_token", { as: org.member.as, params: { token: HEX, appid: "bad app id" } }), 400, "BAD_REQUEST", "Invalid app ID");
    for (const token of ["abcde", "a===", "ab=c", "abc", "tökenbb"]) {
      expectError(await t.call("POST", "/users/me/apns_device_token", { as: org.member.as, params: { token, appid: "org.zulip.Zulip" } }), 400, "BAD_REQUEST", "Invalid APNS token");
    }
    expectError(await t.call("POST", "/users/me/apns_device_token", { as: org.member.as, params: { token: HEX } }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'appid' argument");
    expectError(await t.call("POST", "/users/me/android_gcm_reg_id", { as: org.bot.as, params: { token: "bot" } }), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
  });
});

describe("DELETE /users/me", () => {
  it("refuses the only user of an organization", async () => {
    const r = await t.ok(await t.call("POST", "/internal/realms", { params: { name: "Solo", owner_email: "solo@x.test", owner_full_name: "Solo" } }));
    const who = t.identity({ ...r.owner, realm_id: r.realm_id, role: 100 });
    const res = await t.call("DELETE", "/users/me", { as: who });
    expectError(res, 400, "CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only user.");
    expect(res.body).toMatchObject({ is_last_owner: false, entity: "user" });
    // A bot of theirs is another account (Zulip counts it): they are now the only owner instead.
    await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: r.realm_id, email: "solo-bot@x.test", full_name: "Solo Bot", bot_type: 1, bot_owner_id: r.owner.user_id } }));
    const withBot = await t.call("DELETE", "/users/me", { as: who });
    expectError(withBot, 400, "CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only organization owner.");
    expect(withBot.body).toMatchObject({ is_last_owner: true, entity: "organization owner" });
  });

  it("refuses the only owner while others remain; a second owner may leave", async () => {
    const res = await t.call("DELETE", "/users/me", { as: org.owner.as });
    expectError(res, 400, "CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only organization owner.");
    expect(res.body).toMatchObject({ is_last_owner: true, entity: "organization owner" });
    const second = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "owner2@x.test", full_name: "Second Owner", role: 100 } }));
    await t.ok(await t.call("DELETE", "/users/me", { as: t.identity({ ...second, realm_id: org.realmId, role: 100 }) }));
    expectError(await t.call("DELETE", "/users/me", { as: org.owner.as }), 400, "CANNOT_DEACTIVATE_LAST_USER");
  });

  it("deactivates the caller and their bots, revokes access, and tells the organization", async () => {
    const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "quitter@x.test", full_name: "Quitter" } }));
    const bot = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "quitter-bot@x.test", full_name: "Q Bot", bot_type: 1, bot_owner_id: u.user_id } }));
    const who = t.identity({ ...u, realm_id: org.realmId, role: 400 });
    await t.ok(await t.call("POST", "/users/me/android_gcm_reg_id", { as: who, params: { token: "quitter-phone" } }));
    await t.markOutbox();
    await t.ok(await t.call("DELETE", "/users/me", { as: who }));

    const sys = (await t.ok(await t.call("GET", `/internal/realms/${org.realmId}`))).realm.system_groups;
    const events = await t.outbox();
    const deactivated = events.filter((e) => e.type === "accounts.user.deactivated");
    expect(deactivated.map((e) => e.payload.user.user_id)).toEqual([u.user_id, bot.user_id]);
    expect(deactivated.every((e) => e.payload.user.is_active === false)).toBe(true);
    // Both stay in their groups' member lists (Zulip before feature level 303), as when an
    // administrator deactivates them: no user_group events.
    expect(events.filter((e) => e.payload.client?.event.type === "user_group")).toEqual([]);
    const listed = await t.ok(await t.call("GET", `/user_groups/${sys["role:members"]}/members`, { as: org.member.as }));
    expect(listed.members).toEqual(expect.arrayContaining([u.user_id, bot.user_id]));
    const notice = deactivated[0].payload.client;
    expect(RealmUserUpdateEvent.parse(notice.event)).toEqual({ type: "realm_user", op: "update", person: { user_id: u.user_id, is_active: false } });
    expect(notice.users).toContain(org.guest.user_id);
    expect(notice.users).not.toContain(u.user_id);
    expect(notice.users).not.toContain(other.owner.user_id);

    for (const [email, key] of [["quitter@x.test", u.api_key], ["quitter-bot@x.test", bot.api_key]]) {
      expectError(await t.call("POST", "/internal/authenticate", { params: { email, api_key: key } }), 401, "UNAUTHORIZED", "Account is deactivated");
    }
    const { rows } = await t.pool.query("SELECT count(*)::int AS n FROM push_device_tokens WHERE user_id = $1", [u.user_id]);
    expect(rows[0].n).toBe(0);
    const { members } = await t.ok(await t.call("GET", "/users", { as: org.member.as }));
    expect(members.find((m: any) => m.user_id === u.user_id).is_active).toBe(false);
    const state = await t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.member.as, params: { fetch_event_types: ["realm_user"] } }));
    expect(state.realm_non_active_users.map((m: any) => m.user_id)).toEqual(expect.arrayContaining([u.user_id, bot.user_id]));
    expect(state.realm_users.map((m: any) => m.user_id)).not.toContain(u.user_id);
    // Deactivated users drop out of group membership answers.
    const m = await t.ok(await t.call("GET", "/internal/user_groups/is_member", { params: { realm_id: org.realmId, group_id: sys["role:members"], user_id: u.user_id } }));
    expect(m.is_member).toBe(false);
  });

  it("revokes the leaver's pending invitations and tells the administrators; others' stay", async () => {
    const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "inviter@x.test", full_name: "Inviter" } }));
    const who = t.identity({ ...u, realm_id: org.realmId, role: 400 });
    const invite = (as: any, invitee_emails: string) => t.call("POST", "/invites", { as, params: { invitee_emails, stream_ids: [] } });
    await t.ok(await invite(who, "byme1@new.test, byme2@new.test"));
    await t.ok(await invite(org.member2.as, "byother@new.test"));
    const listed = async () => ((await t.ok(await t.call("GET", "/invites", { as: org.admin.as }))).invites as any[]).map((i) => i.email).sort();
    expect(await listed()).toEqual(expect.arrayContaining(["byme1@new.test", "byme2@new.test", "byother@new.test"]));

    await t.markOutbox();
    await t.ok(await t.call("DELETE", "/users/me", { as: who }));
    const changed = (await t.outbox()).filter((e) => e.type === "accounts.invites.changed");
    expect(changed).toHaveLength(1);
    expect(changed[0].payload.client.event).toEqual({ type: "invites_changed" });
    // The same audience as any invitation change: the organization's administrators (the
    // referrer, now deactivated, has nothing left to refresh).
    expect(changed[0].payload.client.users.sort((a: number, b: number) => a - b)).toEqual([org.owner.user_id, org.admin.user_id].sort((a, b) => a - b));

    const after = await listed();
    expect(after).toContain("byother@new.test");
    expect(after).not.toContain("byme1@new.test");
    expect(after).not.toContain("byme2@new.test");
    expectError(
      await t.call("POST", "/internal/invites/accept", { params: { realm_id: org.realmId, email: "byme1@new.test", full_name: "Bea" } }),
      400,
      "BAD_REQUEST",
      "The confirmation link has expired or been deactivated.",
    );
  });

  it("an administrator deactivating someone revokes their invitations too; with none pending there is no notice", async () => {
    const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "inviter2@x.test", full_name: "Inviter Two" } }));
    await t.ok(await t.call("POST", "/invites", { as: t.identity({ ...u, realm_id: org.realmId, role: 400 }), params: { invitee_emails: "bythem@new.test", stream_ids: [] } }));
    await t.markOutbox();
    await t.ok(await t.call("DELETE", `/users/${u.user_id}`, { as: org.admin.as }));
    expect((await t.outbox()).filter((e) => e.type === "accounts.invites.changed")).toHaveLength(1);
    const invites = (await t.ok(await t.call("GET", "/invites", { as: org.admin.as }))).invites as any[];
    expect(invites.map((i) => i.email)).not.toContain("bythem@new.test");

    const quiet = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "quiet@x.test", full_name: "Quiet" } }));
    await t.markOutbox();
    await t.ok(await t.call("DELETE", "/users/me", { as: t.identity({ ...quiet, realm_id: org.realmId, role: 400 }) }));
    expect((await t.outbox()).filter((e) => e.type === "accounts.invites.changed")).toEqual([]);
  });
});
