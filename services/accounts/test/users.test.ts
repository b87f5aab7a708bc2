import { SYSTEM_GROUP_NAMES } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";

let t: Accounts;
let org: Org;
let other: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  other = await t.createOrg();
  // POST /users is for administrators the operator allowed (can_create_users).
  for (const who of [org.admin, org.owner, org.member, other.owner]) await grantCanCreateUsers(who.as.realmId, who.user_id);
});

const grantCanCreateUsers = async (realmId: number, userId: number, value = true) =>
  t.ok(await t.call("POST", "/internal/users/can_create_users", { params: { realm_id: realmId, user_id: userId, can_create_users: value } }));
afterAll(() => t?.close());

describe("organizations", () => {
  it("creates the 8 system groups, nested, and a notification bot", async () => {
    const { realm } = await t.ok(await t.call("GET", `/internal/realms/${org.realmId}`));
    expect(Object.keys(realm.system_groups).sort()).toEqual([...SYSTEM_GROUP_NAMES].sort());
    expect(realm).toMatchObject({ id: org.realmId, string_id: org.stringId, deactivated: false });
    expect(realm.settings).toMatchObject({ wildcard_mention_policy: 5, invite_to_stream_policy: 1, message_retention_days: null });
    const g = realm.system_groups;
    // The owner is in every role group from owners to internet, but not in nobody.
    for (const name of SYSTEM_GROUP_NAMES) {
      const r = await t.ok(await t.call("GET", "/internal/user_groups/is_member", { params: { realm_id: org.realmId, group_id: g[name], user_id: org.owner.user_id } }));
      expect(r.is_member, name).toBe(name !== "role:nobody");
    }
    const members = await t.ok(await t.call("GET", "/internal/user_groups/members", { params: { realm_id: org.realmId, group_id: g["role:members"] } }));
    const ids = [org.owner, org.admin, org.moderator, org.member, org.member2, org.bot].map((u) => u.user_id).sort((a, b) => a - b);
    expect(members.user_ids).toEqual(ids);
    const admins = await t.ok(await t.call("GET", "/internal/user_groups/members", { params: { realm_id: org.realmId, group_id: g["role:administrators"] } }));
    expect(admins.user_ids).toEqual([org.owner.user_id, org.admin.user_id]);
    const guestIn = await t.ok(await t.call("GET", "/internal/user_groups/is_member", { params: { realm_id: org.realmId, group_id: g["role:members"], user_id: org.guest.user_id } }));
    expect(guestIn.is_member).toBe(false);
    // Another organization's group behaves as missing.
    expectError(await t.call("GET", "/internal/user_groups/members", { params: { realm_id: other.realmId, group_id: g["role:members"] } }), 400, "BAD_REQUEST", "Invalid user group");

    const { users } = await t.ok(await t.call("GET", "/internal/users", { params: { realm_id: org.realmId, user_ids: [realm.notification_bot_id] } }));
    expect(users[0]).toMatchObject({ is_bot: true, bot_type: 1, email: `notification-bot@${org.stringId}.invalid` });
  });

  it("refuses a taken string id and emits realm and user events", async () => {
    await t.markOutbox();
    const r = await t.ok(await t.call("POST", "/internal/realms", { params: { name: "Acme", string_id: "acme-x", owner_email: "o@acme.test", owner_full_name: "Olive" } }));
    const events = await t.outbox();
    expect(events.map((e) => e.type)).toEqual(["accounts.realm.created", "accounts.user.created", "accounts.user.created", "accounts.user_group.members_changed"]);
    expect(events[3].payload).toMatchObject({ op: "add_members", user_ids: [r.owner.user_id] });
    expect(events[2].payload.user).toMatchObject({ user_id: r.owner.user_id, role: 100 });
    expect(events[2].payload.client).toMatchObject({ event: { type: "realm_user", op: "add" }, users: [r.owner.user_id] });
    expectError(
      await t.call("POST", "/internal/realms", { params: { name: "Acme 2", string_id: "ACME-X", owner_email: "o@acme.test", owner_full_name: "Olive" } }),
      400,
      "BAD_REQUEST",
      "Subdomain is already in use. Please choose a different one.",
    );
    expect(await t.outbox()).toEqual([]);
  });

  it("counts the name's 40-character limit in characters (an emoji is one)", async () => {
    const create = (name: string) => t.call("POST", "/internal/realms", { params: { name, owner_email: "o@emoji.test", owner_full_name: "Olive" } });
    expectError(await create("🏢".repeat(41)), 400, "BAD_REQUEST", "Organization name is too long (limit: 40 characters)");
    const r = await t.ok(await create("🏢".repeat(40)));
    expect((await t.ok(await t.call("GET", `/internal/realms/${r.realm_id}`))).realm.name).toBe("🏢".repeat(40));
  });
});

describe("internal authenticate", () => {
  const auth = (email: string, api_key: string) => t.call("POST", "/internal/authenticate", { params: { email, api_key } });

  it("accepts the key with any email case and surrounding spaces", async () => {
    const body = await t.ok(await auth(`  ${org.member.email.toUpperCase()} `, ` ${org.member.api_key} `));
    expect(body).toMatchObject({ user_id: org.member.user_id, realm_id: org.realmId, role: 400, is_bot: false, email: org.member.email });
    const bot = await t.ok(await auth(org.bot.email, org.bot.api_key));
    expect(bot.is_bot).toBe(true);
  });

  it("answers Zulip's 401s, the same for an unknown email and a wrong key", async () => {
    const malformed = await auth(org.member.email, "short");
    expectError(malformed, 401, "UNAUTHORIZED", "Malformed API key");
    expect(malformed.headers["www-authenticate"]).toBe('Basic realm="zulip"');
    expectError(await auth(org.member.email, org.admin.api_key), 401, "UNAUTHORIZED", "Invalid API key");
    expectError(await auth("nobody@nowhere.test", org.admin.api_key), 401, "UNAUTHORIZED", "Invalid API key");
    expectError(await auth(other.member.email, org.member.api_key), 401, "UNAUTHORIZED", "Invalid API key");
  });

  it("without an email, finds the key's user from the key alone (an integration URL's api_key)", async () => {
    const keyOnly = (api_key: string) => t.call("POST", "/internal/authenticate", { params: { api_key } });
    expect(await t.ok(await keyOnly(` ${org.bot.api_key} `))).toMatchObject({ user_id: org.bot.user_id, realm_id: org.realmId, is_bot: true, email: org.bot.email });
    expect((await t.ok(await keyOnly(other.member.api_key))).user_id).toBe(other.member.user_id);
    expectError(await keyOnly("z".repeat(32)), 401, "UNAUTHORIZED", "Invalid API key");
    expectError(await keyOnly("short"), 401, "UNAUTHORIZED", "Malformed API key");
  });

  it("a key reset revokes the old key at once and emits api_key.reset", async () => {
    const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "reset@x.test", full_name: "Re Set" } }));
    await t.markOutbox();
    const r = await t.ok(await t.call("POST", "/internal/users/api_key/reset", { params: { realm_id: org.realmId, email: "RESET@x.test" } }));
    expect(r.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(r.api_key).not.toBe(u.api_key);
    expectError(await auth("reset@x.test", u.api_key), 401, "UNAUTHORIZED", "Invalid API key");
    await t.ok(await auth("reset@x.test", r.api_key));
    const events = await t.outbox();
    expect(events).toEqual([{ type: "accounts.api_key.reset", realm_id: org.realmId, payload: { user_id: u.user_id, email: "reset@x.test" } }]);
    expectError(await t.call("POST", "/internal/users/api_key/reset", { params: { realm_id: other.realmId, email: "reset@x.test" } }), 400, "BAD_REQUEST", "No such user");
  });

  it("refuses deactivated users and stores keys only as hashes", async () => {
    const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: other.realmId, email: "leaver@x.test", full_name: "Lea Ver" } }));
    const who = t.identity({ ...u, realm_id: other.realmId, role: 400 });
    await t.ok(await t.call("DELETE", "/users/me", { as: who }));
    expectError(await auth("leaver@x.test", u.api_key), 401, "UNAUTHORIZED", "Account is deactivated");
    const { rows } = await t.pool.query("SELECT key_hash FROM api_keys WHERE user_id = $1", [u.user_id]);
    expect(rows.length).toBe(1);
    expect(rows[0].key_hash).not.toContain(u.api_key);
  });

  it("refuses users of a deactivated organization", async () => {
    const r = await t.ok(await t.call("POST", "/internal/realms", { params: { name: "Gone", owner_email: "o@gone.test", owner_full_name: "Olive" } }));
    await t.pool.query("UPDATE realms SET deactivated = true WHERE id = $1", [r.realm_id]);
    expectError(await auth("o@gone.test", r.owner.api_key), 401, "UNAUTHORIZED", "This organization has been deactivated");
  });
});

describe("users", () => {
  it("GET /users/me returns the caller's fields flattened", async () => {
    const body = await t.ok(await t.call("GET", "/users/me", { as: org.admin.as }));
    expect(body).toMatchObject({
      user_id: org.admin.user_id,
      email: org.admin.email,
      delivery_email: org.admin.email,
      full_name: "Adam Admin",
      is_admin: true,
      is_owner: false,
      is_guest: false,
      role: 200,
      is_bot: false,
      is_active: true,
    });
    expect(body.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\//);
    expect(new Date(body.date_joined).getTime()).not.toBeNaN();
  });

  it("GET /users lists the organization only, without system bots", async () => {
    const { members } = await t.ok(await t.call("GET", "/users", { as: org.guest.as }));
    const ids = members.map((m: any) => m.user_id);
    expect(ids).toContain(org.bot.user_id);
    expect(ids).not.toContain(other.owner.user_id);
    expect(members.some((m: any) => m.email.startsWith("notification-bot@"))).toBe(false);
    const bot = members.find((m: any) => m.user_id === org.bot.user_id);
    expect(bot).toMatchObject({ is_bot: true, bot_type: 1, bot_owner_id: org.member.user_id });
    expect(members.every((m: any) => m.avatar_url === null)).toBe(true);
    const noGravatar = await t.ok(await t.call("GET", "/users", { as: org.guest.as, params: { client_gravatar: false } }));
    expect(noGravatar.members[0].avatar_url).toMatch(/gravatar/);
  });

  it("GET /users/{id}: another organization's user is 'No such user'", async () => {
    const { user } = await t.ok(await t.call("GET", `/users/${org.moderator.user_id}`, { as: org.member.as }));
    expect(user).toMatchObject({ user_id: org.moderator.user_id, role: 300, full_name: "Mona Moderator" });
    expectError(await t.call("GET", `/users/${other.member.user_id}`, { as: org.member.as }), 400, "BAD_REQUEST", "No such user");
    expectError(await t.call("GET", "/users/999999", { as: org.member.as }), 400, "BAD_REQUEST", "No such user");
  });

  it("GET /users/{email}: by API email, dummy address, or a real address the caller may see", async () => {
    const byEmail = (email: string, as = org.member.as) => t.call("GET", `/users/${encodeURIComponent(email)}`, { as });
    // A user whose address everyone sees: by it, in any case.
    const { user } = await t.ok(await byEmail(org.moderator.email.toUpperCase()));
    expect(user).toMatchObject({ user_id: org.moderator.user_id, full_name: "Mona Moderator" });
    // Hidden from all but administrators: the API email becomes a dummy, which finds the user
    // for anyone; the real address only for those who may see it.
    await t.ok(await t.call("PATCH", "/settings", { as: org.member2.as, params: { email_address_visibility: 3 } }));
    const dummy = `user${org.member2.user_id}@${org.stringId}.invalid`;
    expect((await t.ok(await byEmail(dummy))).user).toMatchObject({ user_id: org.member2.user_id, email: dummy, delivery_email: null });
    expect((await t.ok(await byEmail(org.member2.email, org.admin.as))).user).toMatchObject({ user_id: org.member2.user_id, delivery_email: org.member2.email });
    expectError(await byEmail(org.member2.email), 400, "BAD_REQUEST", "No such user");
    // Unknown addresses and other organizations' users look the same.
    expectError(await byEmail("nobody@x.test"), 400, "BAD_REQUEST", "No such user");
    expectError(await byEmail(other.member.email), 400, "BAD_REQUEST", "No such user");
    expectError(await byEmail(`user${other.member.user_id}@${org.stringId}.invalid`), 400, "BAD_REQUEST", "No such user");
    // The id route and /users/me are still theirs.
    expect((await t.ok(await t.call("GET", `/users/${org.moderator.user_id}`, { as: org.member.as }))).user.user_id).toBe(org.moderator.user_id);
    expect((await t.ok(await t.call("GET", "/users/me", { as: org.member.as }))).user_id).toBe(org.member.user_id);
    await t.ok(await t.call("PATCH", "/settings", { as: org.member2.as, params: { email_address_visibility: 1 } }));
  });

  it("POST /users: administrators create members; realm_user add reaches the organization", async () => {
    await t.markOutbox();
    const body = await t.ok(await t.call("POST", "/users", { as: org.admin.as, params: { email: "New.Person@x.test", password: "pw-123456", full_name: " New Person " } }));
    const events = await t.outbox();
    // The last one has this service's consumer subscribe them to the default channels.
    expect(events.map((e) => e.type)).toEqual(["accounts.user.created", "accounts.user_group.members_changed", "accounts.user_group.members_changed", "accounts.user.joined"]);
    expect(events[3].payload).toEqual({ user_id: body.user_id });
    expect(events[0].payload.user).toMatchObject({ user_id: body.user_id, role: 400, full_name: "New Person", email: "New.Person@x.test" });
    const client = events[0].payload.client;
    expect(client.event.person).toMatchObject({ user_id: body.user_id, full_name: "New Person", is_active: true });
    expect(client.users).toContain(org.owner.user_id);
    expect(client.users).not.toContain(other.owner.user_id);
    const login = await t.ok(await t.call("POST", "/fetch_api_key", { params: { username: "new.person@x.test", password: "pw-123456" } }));
    expect(login.user_id).toBe(body.user_id);
  });

  it("POST /users needs the operator's can_create_users as well as an administrator's role", async () => {
    await t.markOutbox();
    const post = (who: Org["owner"]) => t.call("POST", "/users", { as: who.as, params: { email: "perm@x.test", password: "pw-123456", full_name: "Perm" } });
    // The org's moderator was never allowed; the member was allowed but is no administrator.
    for (const who of [org.moderator, org.member]) expectError(await post(who), 400, "BAD_REQUEST", "User not authorized to create users");
    await grantCanCreateUsers(org.owner.as.realmId, org.owner.user_id, false);
    expectError(await post(org.owner), 400, "BAD_REQUEST", "User not authorized to create users");
    expect(await t.outbox()).toEqual([]);
    // Another organization's user id is no user here.
    expectError(
      await t.call("POST", "/internal/users/can_create_users", { params: { realm_id: org.realmId, user_id: other.owner.user_id, can_create_users: true } }),
      400,
      "BAD_REQUEST",
      "No such user",
    );
    await grantCanCreateUsers(org.owner.as.realmId, org.owner.user_id);
    await t.ok(await post(org.owner));
  });

  it("POST /users refuses non-administrators and bad input, storing nothing", async () => {
    await t.markOutbox();
    for (const who of [org.moderator, org.member, org.guest]) {
      expectError(
        await t.call("POST", "/users", { as: who.as, params: { email: "x1@x.test", password: "pw", full_name: "Xena" } }),
        400,
        "BAD_REQUEST",
        "User not authorized to create users",
      );
    }
    const post = (params: Record<string, unknown>) => t.call("POST", "/users", { as: org.owner.as, params });
    expectError(await post({ email: org.member.email.toUpperCase(), password: "pw", full_name: "Xena" }), 400, "BAD_REQUEST", `Email '${org.member.email.toUpperCase()}' already in use`);
    expectError(await post({ email: "not-an-email", password: "pw", full_name: "Xena" }), 400, "BAD_REQUEST", "Invalid email 'not-an-email'");
    expectError(await post({ email: "ok@x.test", password: "pw", full_name: "   " }), 400, "BAD_REQUEST", "Name too short!");
    expectError(await post({ email: "ok@x.test", password: "pw", full_name: "xx".repeat(101) }), 400, "BAD_REQUEST", "Name too long!");
    expectError(await post({ email: "ok@x.test", password: "pw", full_name: "😀".repeat(101) }), 400, "BAD_REQUEST", "Name too long!");
    expectError(await post({ email: "ok@x.test", password: "pw", full_name: "Bad*Name" }), 400, "BAD_REQUEST", "Invalid characters in name!");
    expectError(await post({ email: "ok@x.test", full_name: "XX" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'password' argument");
    // Zulip's minimum length, checked after the name and the address, in characters.
    expectError(await post({ email: "ok@x.test", password: "pw", full_name: "Xena" }), 400, "BAD_REQUEST", "The password is too weak.");
    expectError(await post({ email: "ok@x.test", password: "", full_name: "XX" }), 400, "BAD_REQUEST", "The password is too weak.");
    expectError(await post({ email: "ok@x.test", password: "😀😀😀😀😀", full_name: "XX" }), 400, "BAD_REQUEST", "The password is too weak.");
    expect(await t.outbox()).toEqual([]);
    // The same email is free in another organization.
    await t.ok(await t.call("POST", "/users", { as: other.owner.as, params: { email: org.member.email, password: "😀😀😀😀😀😀", full_name: "Twin" } }));
  });

  it("internal user lookup by ids and emails stays inside the realm", async () => {
    const { users } = await t.ok(
      await t.call("GET", "/internal/users", { params: { realm_id: org.realmId, user_ids: [org.member.user_id, other.member.user_id], emails: [org.guest.email.toUpperCase()] } }),
    );
    expect(users.map((u: any) => u.user_id).sort()).toEqual([org.member.user_id, org.guest.user_id].sort());
    expect(users.find((u: any) => u.user_id === org.guest.user_id)).toMatchObject({ role: 600, realm_id: org.realmId, is_active: true });
  });
});

describe("fetch_api_key and server_settings", () => {
  const login = (username: string, password: string) => t.call("POST", "/fetch_api_key", { params: { username, password } });
  const authenticate = (email: string, api_key: string) => t.call("POST", "/internal/authenticate", { params: { email, api_key } });
  /** A fresh user with a password, so each test sees its own keys. */
  const userWithPassword = async (email: string, password: string) =>
    t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email, full_name: "Log In", password } }));

  it("returns the user's login key, the same on every login, as Zulip's one key; the account's own key keeps working", async () => {
    const u = await userWithPassword("login1@x.test", "login-pass-1");
    const first = await t.ok(await login("login1@x.test", "login-pass-1"));
    expect(first).toMatchObject({ email: "login1@x.test", user_id: u.user_id });
    expect(first.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    await t.ok(await authenticate("login1@x.test", first.api_key));
    for (let i = 0; i < 24; i++) expect((await t.ok(await login(" LOGIN1@x.test ", "login-pass-1"))).api_key).toBe(first.api_key);
    // 25 logins revoked nothing: the key the account was created with still works.
    await t.ok(await authenticate("login1@x.test", u.api_key));
    const { rows } = await t.pool.query("SELECT key_hash, sealed FROM api_keys WHERE user_id = $1 ORDER BY id", [u.user_id]);
    expect(rows.length).toBe(2);
    expect(rows[1].sealed).not.toContain(first.api_key);
    expect(rows[1].key_hash).not.toContain(first.api_key);
  });

  it("keeps the login key through a password change, and issues a new one after a key reset", async () => {
    const u = await userWithPassword("login2@x.test", "login-pass-2");
    const who = t.identity({ ...u, realm_id: org.realmId, role: 400 });
    const before = (await t.ok(await login("login2@x.test", "login-pass-2"))).api_key;
    await t.ok(await t.call("PATCH", "/settings", { as: who, params: { old_password: "login-pass-2", new_password: "login-pass-2b" } }));
    expectError(await login("login2@x.test", "login-pass-2"), 401, "AUTHENTICATION_FAILED");
    expect((await t.ok(await login("login2@x.test", "login-pass-2b"))).api_key).toBe(before);
    await t.ok(await authenticate("login2@x.test", before));

    const reset = await t.ok(await t.call("POST", "/internal/users/api_key/reset", { params: { realm_id: org.realmId, email: "login2@x.test" } }));
    expectError(await authenticate("login2@x.test", before), 401, "UNAUTHORIZED", "Invalid API key");
    const after = (await t.ok(await login("login2@x.test", "login-pass-2b"))).api_key;
    expect([before, reset.api_key]).not.toContain(after);
    await t.ok(await authenticate("login2@x.test", after));
    await t.ok(await authenticate("login2@x.test", reset.api_key));
    expect((await t.ok(await login("login2@x.test", "login-pass-2b"))).api_key).toBe(after);
  });

  it("issues a new login key when the sealed one no longer opens (its password was set elsewhere)", async () => {
    const u = await userWithPassword("login3@x.test", "login-pass-3");
    const before = (await t.ok(await login("login3@x.test", "login-pass-3"))).api_key;
    // A password set without the old one (as an earlier release's change did) leaves the sealed key unopenable.
    const other = await userWithPassword("login3b@x.test", "login-pass-3b");
    const { rows } = await t.pool.query("SELECT password_hash FROM users WHERE id = $1", [other.user_id]);
    await t.pool.query("UPDATE users SET password_hash = $2 WHERE id = $1", [u.user_id, rows[0].password_hash]);
    const after = (await t.ok(await login("login3@x.test", "login-pass-3b"))).api_key;
    expect(after).not.toBe(before);
    await t.ok(await authenticate("login3@x.test", after));
    await t.ok(await authenticate("login3@x.test", before));
    expect((await t.ok(await login("login3@x.test", "login-pass-3b"))).api_key).toBe(after);
  });

  it("gives one answer for a wrong password and an unknown user", async () => {
    const wrong = await t.call("POST", "/fetch_api_key", { params: { username: org.member.email, password: "nope" } });
    const unknown = await t.call("POST", "/fetch_api_key", { params: { username: "ghost@x.test", password: "nope" } });
    const nopass = await t.call("POST", "/fetch_api_key", { params: { username: org.member2.email, password: "nope" } });
    for (const r of [wrong, unknown, nopass]) expectError(r, 401, "AUTHENTICATION_FAILED", "Your username or password is incorrect");
    expectError(await t.call("POST", "/fetch_api_key", { params: { username: org.member.email } }), 400, "REQUEST_VARIABLE_MISSING");
  });

  it("tells a deactivated user so only after a correct password", async () => {
    const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "gone@x.test", full_name: "Gone", password: "gone-pass" } }));
    await t.ok(await t.call("DELETE", "/users/me", { as: t.identity({ ...u, realm_id: org.realmId, role: 400 }) }));
    expectError(await t.call("POST", "/fetch_api_key", { params: { username: "gone@x.test", password: "bad" } }), 401, "AUTHENTICATION_FAILED");
    expectError(await t.call("POST", "/fetch_api_key", { params: { username: "gone@x.test", password: "gone-pass" } }), 401, "USER_DEACTIVATED", "Account is deactivated");
  });

  it("server_settings needs no identity and reports feature level 267", async () => {
    const body = await t.ok(await t.call("GET", "/server_settings"));
    expect(body).toMatchObject({ zulip_feature_level: 267, push_notifications_enabled: false, is_incompatible: false, email_auth_enabled: true });
    expect(body.authentication_methods.password).toBe(true);
  });

  it("refuses calls without the internal token", async () => {
    const res = await t.app.inject({ method: "GET", url: "/api/v1/server_settings" });
    expect(res.statusCode).toBe(401);
  });
});
