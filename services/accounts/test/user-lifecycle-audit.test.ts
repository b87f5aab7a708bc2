import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { notices, registerState } from "./settings-kit";

/**
 * The lifecycle of people and bots where Zulip does more than the rest of this directory checks:
 * reactivating a bot (its name, its deactivated owner), a person's bots across their own
 * reactivation, logging in again, and replacing one's own API key.
 */

let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
});
afterAll(() => t?.close());

let seq = 0;
/** A member (with a password) of the test organization, or a bot of `owner`. */
async function mkUser(fullName: string, extra: Record<string, unknown> = {}): Promise<TestUser> {
  const n = ++seq;
  const isBot = "bot_type" in extra;
  const email = isBot ? `lc${n}-bot@x.test` : `lc${n}@x.test`;
  const u = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email, full_name: fullName, ...(isBot ? {} : { password: "lifecycle-pass-1" }), ...extra } }));
  return { ...u, role: 400, realm_id: org.realmId, as: t.identity({ ...u, role: 400, realm_id: org.realmId, is_bot: isBot }) };
}
/** Ids of the organization's active accounts, sorted (the audience of realm-wide events). */
async function activeIds(): Promise<number[]> {
  const { members } = await t.ok(await t.call("GET", "/users", { as: org.owner.as }));
  return members.filter((m: any) => m.is_active).map((m: any) => m.user_id as number).sort((a: number, b: number) => a - b);
}
const reactivate = (id: number, as = org.admin) => t.call("POST", `/users/${id}/reactivate`, { as: as.as });
const authenticate = (u: { email: string }, apiKey: string) => t.call("POST", "/internal/authenticate", { params: { email: u.email, api_key: apiKey } });
const fetchApiKey = (u: { email: string }) => t.call("POST", "/fetch_api_key", { params: { username: u.email, password: "lifecycle-pass-1" } });

describe("reactivating a person", () => {
  it("brings back only them: the bots deactivated with them stay deactivated; they log in again with their key and password", async () => {
    const person = await mkUser("Rita Return");
    const bot = await mkUser("Rita Bot", { bot_type: 1, bot_owner_id: person.user_id });
    await t.ok(await t.call("DELETE", `/users/${person.user_id}`, { as: org.admin.as }));
    expectError(await fetchApiKey(person), 401, "USER_DEACTIVATED", "Account is deactivated");

    await t.markOutbox();
    await t.ok(await reactivate(person.user_id));
    const got = await notices(t);
    expect(got.map((n) => n.event)).toEqual([{ type: "realm_user", op: "update", person: { user_id: person.user_id, is_active: true } }]);

    const { user } = await t.ok(await t.call("GET", `/users/${bot.user_id}`, { as: org.member.as }));
    expect(user.is_active).toBe(false);
    expectError(await authenticate(bot, bot.api_key), 401, "UNAUTHORIZED", "Account is deactivated");
    expect((await t.ok(await t.call("GET", "/bots", { as: person.as }))).bots).toEqual([]);

    await t.ok(await authenticate(person, person.api_key));
    const login = await t.ok(await fetchApiKey(person));
    expect(login).toMatchObject({ email: person.email, user_id: person.user_id });
    await t.ok(await authenticate(person, login.api_key));
  });
});

describe("reactivating a bot", () => {
  it("whose owner is deactivated: the reactivating administrator becomes its owner, with Zulip's owner-change events", async () => {
    const person = await mkUser("Otto Orphan");
    const bot = await mkUser("Orphan Bot", { bot_type: 1, bot_owner_id: person.user_id });
    await t.ok(await t.call("DELETE", `/users/${person.user_id}`, { as: org.admin.as }));

    await t.markOutbox();
    await t.ok(await reactivate(bot.user_id));
    const got = await notices(t);
    const admins = [org.owner.user_id, org.admin.user_id].sort((a, b) => a - b);
    const active = await activeIds();
    expect(got.map((n) => [n.event, n.users])).toEqual([
      [{ type: "realm_user", op: "update", person: { user_id: bot.user_id, is_active: true } }, active],
      [{ type: "realm_bot", op: "update", bot: { user_id: bot.user_id, is_active: true } }, admins],
      // The previous owner (deactivated, so no client hears it) loses the bot; administrators learn the owner.
      [{ type: "realm_bot", op: "delete", bot: { user_id: bot.user_id } }, [person.user_id]],
      [{ type: "realm_bot", op: "update", bot: { user_id: bot.user_id, owner_id: org.admin.user_id } }, admins],
      [{ type: "realm_user", op: "update", person: { user_id: bot.user_id, bot_owner_id: org.admin.user_id } }, active],
    ]);
    const { user } = await t.ok(await t.call("GET", `/users/${bot.user_id}`, { as: org.member.as }));
    expect(user).toMatchObject({ is_active: true, bot_owner_id: org.admin.user_id });
    expect((await t.ok(await t.call("GET", "/bots", { as: org.admin.as }))).bots.map((b: any) => b.user_id)).toContain(bot.user_id);
    await t.ok(await authenticate(bot, bot.api_key));
    const state = await registerState(t, org.admin.as, { fetch_event_types: ["realm_bot"] });
    expect(state.realm_bots.find((b: any) => b.user_id === bot.user_id)).toMatchObject({ is_active: true, owner_id: org.admin.user_id });

    // The person, reactivated later, does not get it back.
    await t.ok(await reactivate(person.user_id));
    expect((await t.ok(await t.call("GET", "/bots", { as: person.as }))).bots).toEqual([]);
  });

  it("whose owner is active keeps that owner; only is_active changes", async () => {
    const person = await mkUser("Kept Owner");
    const bot = await mkUser("Kept Bot", { bot_type: 2, bot_owner_id: person.user_id });
    await t.ok(await t.call("DELETE", `/bots/${bot.user_id}`, { as: person.as }));
    await t.markOutbox();
    await t.ok(await reactivate(bot.user_id));
    expect((await notices(t)).map((n) => n.event)).toEqual([
      { type: "realm_user", op: "update", person: { user_id: bot.user_id, is_active: true } },
      { type: "realm_bot", op: "update", bot: { user_id: bot.user_id, is_active: true } },
    ]);
    expect((await t.ok(await t.call("GET", "/bots", { as: person.as }))).bots.map((b: any) => b.user_id)).toEqual([bot.user_id]);
  });

  it("is refused while an active account has its name; once renamed, it comes back", async () => {
    const person = await mkUser("Name Keeper");
    const bot = await mkUser("Shared Name", { bot_type: 1, bot_owner_id: person.user_id });
    await t.ok(await t.call("DELETE", `/bots/${bot.user_id}`, { as: person.as }));
    // A new bot takes the name meanwhile.
    const { user_id: newer } = await t.ok(await t.call("POST", "/bots", { as: person.as, params: { full_name: "Shared Name", short_name: `newer${seq}` } }));

    await t.markOutbox();
    expectError(
      await reactivate(bot.user_id),
      400,
      "BAD_REQUEST",
      'There is already an active bot named "Shared Name" in this organization. To reactivate this bot, you must rename or deactivate the other one.',
    );
    expect(await t.outbox()).toEqual([]);
    expect((await t.ok(await t.call("GET", `/users/${bot.user_id}`, { as: org.member.as }))).user.is_active).toBe(false);

    await t.ok(await t.call("PATCH", `/bots/${newer}`, { as: person.as, params: { full_name: "Renamed Newer" } }));
    await t.ok(await reactivate(bot.user_id));
    expect((await t.ok(await t.call("GET", `/users/${bot.user_id}`, { as: org.member.as }))).user.is_active).toBe(true);
  });
});

describe("POST /users/me/api_key/regenerate", () => {
  it("replaces the caller's key: the old one is refused at once, the new one works, the gateways are told", async () => {
    const person = await mkUser("Kay Rotate");
    const login = (await t.ok(await fetchApiKey(person))).api_key;
    await t.ok(await t.call("POST", "/users/me/android_gcm_reg_id", { as: person.as, params: { token: "rotating-phone" } }));
    await t.markOutbox();

    const { api_key } = await t.ok(await t.call("POST", "/users/me/api_key/regenerate", { as: person.as }));
    expect(api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect([person.api_key, login]).not.toContain(api_key);
    for (const old of [person.api_key, login]) expectError(await authenticate(person, old), 401, "UNAUTHORIZED", "Invalid API key");
    expect(await t.ok(await authenticate(person, api_key))).toMatchObject({ user_id: person.user_id });
    // The domain event the gateways drop their cached checks on; nothing for clients.
    const events = await t.outbox();
    expect(events.map((e) => [e.type, e.payload])).toEqual([["accounts.api_key.reset", { user_id: person.user_id, email: person.email }]]);
    // Devices signed in with the old key get no more notifications.
    const { rows } = await t.pool.query("SELECT count(*)::int AS n FROM push_device_tokens WHERE user_id = $1", [person.user_id]);
    expect(rows[0].n).toBe(0);
    // A password login afterwards gets a working key, and the regenerated one stays valid.
    const again = (await t.ok(await fetchApiKey(person))).api_key;
    await t.ok(await authenticate(person, again));
    await t.ok(await authenticate(person, api_key));
  });

  it("a bot may replace its own key too", async () => {
    const bot = await mkUser("Self Rotating Bot", { bot_type: 1, bot_owner_id: org.member.user_id });
    const { api_key } = await t.ok(await t.call("POST", "/users/me/api_key/regenerate", { as: bot.as }));
    expectError(await authenticate(bot, bot.api_key), 401, "UNAUTHORIZED", "Invalid API key");
    await t.ok(await authenticate(bot, api_key));
  });

  it("ignores parameters it does not take, and changes only the caller's key", async () => {
    const person = await mkUser("Only Mine");
    const res = await t.ok(await t.call("POST", "/users/me/api_key/regenerate", { as: person.as, params: { user_id: org.member.user_id } }));
    expect(res.ignored_parameters_unsupported).toEqual(["user_id"]);
    await t.ok(await authenticate(org.member, org.member.api_key));
  });
});
