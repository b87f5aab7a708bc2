import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, type TestEnv } from "@chat/testkit";
import { AmqpClient, createLogger, INTERNAL_HEADERS } from "@chat/platform";
import { basic, call, deadUrl, eventually, startAuthCacheConsumer, startGateway, type RunningGateway } from "./helpers";
import { KEY_A, KEY_B, startEcho, startFakeAccounts, TEST_ROUTES, TEST_USERS, type FakeAccounts } from "./fixtures";
import type { FakeService } from "./helpers";
import { AuthCache } from "../src/auth/cache";

const WWW = 'Basic realm="zulip"';
const unauthorized = (msg: string) => ({ result: "error", msg, code: "UNAUTHORIZED" });

let env: TestEnv;
let accounts: FakeAccounts;
let messaging: FakeService;
let gw: RunningGateway;
let consumer: AmqpClient;
let publisher: AmqpClient;

beforeAll(async () => {
  env = await createTestEnv();
  accounts = await startFakeAccounts(env.vars.INTERNAL_TOKEN, TEST_USERS());
  messaging = await startEcho("messaging");
  gw = await startGateway({
    vars: env.vars,
    routes: TEST_ROUTES,
    overrides: { ACCOUNTS_URL: accounts.url, MESSAGING_URL: messaging.url, RATE_LIMITING_ENABLED: "false" },
  });
  consumer = await startAuthCacheConsumer(gw.config, gw.redis);
  publisher = new AmqpClient(env.vars.AMQP_URL, env.vars.AMQP_EXCHANGE, env.vars.AMQP_QUEUE_PREFIX, createLogger("test", "silent"));
  await publisher.start();
});

afterAll(async () => {
  await consumer?.close();
  await publisher?.close();
  await gw?.close();
  await Promise.all([accounts?.close(), messaging?.close()]);
  await env?.cleanup();
});

const echo = (authorization?: string) => call(gw.url, "GET", "/api/v1/echo", { headers: authorization === undefined ? {} : { authorization } });

function publish(type: string, realmId: number, payload: Record<string, unknown>) {
  return publisher.publishConfirmed([
    { routingKey: type, envelope: { id: randomUUID(), type, version: 1, occurred_at: new Date().toISOString(), realm_id: realmId, payload } },
  ]);
}

const summary = (u: { user_id: number; realm_id: number; email: string; role: number; is_bot: boolean; active: boolean }) => ({
  user_id: u.user_id,
  realm_id: u.realm_id,
  email: u.email,
  delivery_email: u.email,
  full_name: "Someone",
  role: u.role,
  is_active: u.active,
  is_bot: u.is_bot,
  bot_type: null,
  bot_owner_id: null,
  date_joined: new Date().toISOString(),
  timezone: "",
});

describe("HTTP Basic authentication failures", () => {
  it("asks for credentials when there is no Authorization header", async () => {
    const res = await echo();
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized("Not logged in: API authentication or user session required"));
    expect(res.headers["www-authenticate"]).toBe(WWW);
  });

  it("refuses other schemes with 401 UNAUTHORIZED (spec section 5; Zulip answers 400), in Zulip's words", async () => {
    for (const header of ["Bearer abcdef", "Digest username=x", "Token " + KEY_A]) {
      const res = await echo(header);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(unauthorized("This endpoint requires HTTP basic authentication."));
      expect(res.headers["www-authenticate"]).toBe(WWW);
    }
  });

  it("answers 401 for a header that is not two words, whatever its scheme, as Zulip does", async () => {
    for (const header of ["Bearer", "Bearer a b", "Digest username=x, realm=y"]) {
      const res = await echo(header);
      expect(res.status, header).toBe(401);
      expect(res.body).toEqual(unauthorized("Invalid authorization header for basic auth"));
      expect(res.headers["www-authenticate"]).toBe(WWW);
    }
  });

  it("rejects an undecodable header or one without a colon", async () => {
    const cases = [
      "Basic !!!not-base64!!!",
      "Basic " + Buffer.from("no-colon-here").toString("base64"),
      "Basic " + Buffer.from("a:b:c").toString("base64"),
      "Basic " + Buffer.from([0xff, 0xfe, 0x3a, 0x41]).toString("base64"),
      "Basic",
    ];
    for (const header of cases) {
      const res = await echo(header);
      expect(res.status, header).toBe(401);
      expect(res.body).toEqual(unauthorized("Invalid authorization header for basic auth"));
      expect(res.headers["www-authenticate"]).toBe(WWW);
    }
  });

  it("rejects a malformed key without asking accounts", async () => {
    const before = accounts.authCalls;
    for (const key of ["short", KEY_A + "x", KEY_A.slice(0, 31) + "-", ""]) {
      const res = await echo(basic("iago@zulip.example", key));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(unauthorized("Malformed API key"));
      expect(res.headers["www-authenticate"]).toBe(WWW);
    }
    expect(accounts.authCalls).toBe(before);
  });

  it("gives the same answer for a wrong key and for an unknown email", async () => {
    const wrongKey = await echo(basic("iago@zulip.example", KEY_B));
    const unknownEmail = await echo(basic("nobody@zulip.example", KEY_A));
    for (const res of [wrongKey, unknownEmail]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual(unauthorized("Invalid API key"));
      expect(res.headers["www-authenticate"]).toBe(WWW);
    }
    const strip = (h: Record<string, unknown>) => Object.keys(h).filter((k) => !["date", "x-request-id"].includes(k)).sort();
    expect(strip(wrongKey.headers)).toEqual(strip(unknownEmail.headers));
    expect(wrongKey.text).toBe(unknownEmail.text);
  });

  it("reports deactivated users and organizations", async () => {
    const user = accounts.users.find((u) => u.email === "bot@zulip.example")!;
    user.active = false;
    const res = await echo(basic(user.email, user.api_key));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized("Account is deactivated"));
    expect(res.headers["www-authenticate"]).toBe(WWW);
    user.active = true;

    const other = accounts.users.find((u) => u.realm_id === 2)!;
    accounts.deactivatedRealms.add(2);
    const realm = await echo(basic(other.email, other.api_key));
    expect(realm.status).toBe(401);
    expect(realm.body).toEqual(unauthorized("This organization has been deactivated"));
    expect(realm.headers["www-authenticate"]).toBe(WWW);
    accounts.deactivatedRealms.delete(2);
  });

  it("strips spaces around the email and key, and passes the check to accounts with the internal token", async () => {
    const res = await echo("Basic " + Buffer.from("  hamlet@zulip.example :  " + KEY_B + "  ").toString("base64"));
    expect(res.status).toBe(200);
    expect(res.body.headers[INTERNAL_HEADERS.userId]).toBe("12");
    expect(accounts.lastAuthHeaders[INTERNAL_HEADERS.token]).toBe(env.vars.INTERNAL_TOKEN);
  });

  it("answers 503, not 401, when accounts cannot be reached", async () => {
    const orphan = await startGateway({ vars: env.vars, routes: TEST_ROUTES, overrides: { ACCOUNTS_URL: await deadUrl(), MESSAGING_URL: messaging.url, REDIS_PREFIX: `${env.vars.REDIS_PREFIX}orphan:` } });
    try {
      const res = await call(orphan.url, "GET", "/api/v1/echo", { headers: { authorization: basic("iago@zulip.example", KEY_A) } });
      expect(res.status).toBe(503);
      expect(res.body.code).toBe("SERVICE_UNAVAILABLE");
    } finally {
      await orphan.close();
    }
  });
});

describe("credential cache", () => {
  it("asks accounts once, then serves repeated requests from the cache", async () => {
    const auth = basic("hamlet@zulip.example", KEY_B);
    const first = await echo(auth);
    expect(first.status).toBe(200);
    const calls = accounts.authCalls;
    for (let i = 0; i < 3; i++) expect((await echo(auth)).status).toBe(200);
    expect(accounts.authCalls).toBe(calls);
  });

  it("never caches failures", async () => {
    const before = accounts.authCalls;
    await echo(basic("iago@zulip.example", KEY_B));
    await echo(basic("iago@zulip.example", KEY_B));
    expect(accounts.authCalls).toBe(before + 2);
  });

  it("stops accepting a key within a second of accounts.api_key.reset", async () => {
    const user = accounts.users.find((u) => u.email === "iago@zulip.example")!;
    const auth = basic(user.email, user.api_key);
    expect((await echo(auth)).status).toBe(200);
    user.api_key = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeee5";
    // Still cached: accounts is not asked again until the event arrives.
    expect((await echo(auth)).status).toBe(200);
    await publish("accounts.api_key.reset", user.realm_id, { user_id: user.user_id, email: user.email });
    await eventually(async () => (await echo(auth)).status === 401, 1000);
    expect((await echo(auth)).body).toEqual(unauthorized("Invalid API key"));
    expect((await echo(basic(user.email, user.api_key))).status).toBe(200);
  });

  it("drops a deactivated user's cached check within a second", async () => {
    const user = accounts.users.find((u) => u.email === "hamlet@zulip.example")!;
    const auth = basic(user.email, user.api_key);
    expect((await echo(auth)).status).toBe(200);
    user.active = false;
    expect((await echo(auth)).status).toBe(200);
    await publish("accounts.user.deactivated", user.realm_id, { user: summary(user) });
    await eventually(async () => (await echo(auth)).status === 401, 1000);
    expect((await echo(auth)).body).toEqual(unauthorized("Account is deactivated"));
    user.active = true;
  });

  it("passes a changed role on within a second of accounts.user.updated", async () => {
    const user = accounts.users.find((u) => u.email === "hamlet@zulip.example")!;
    const auth = basic(user.email, user.api_key);
    expect((await echo(auth)).body.headers[INTERNAL_HEADERS.role]).toBe("400");
    user.role = 300;
    await publish("accounts.user.updated", user.realm_id, { user: summary(user) });
    await eventually(async () => (await echo(auth)).body.headers[INTERNAL_HEADERS.role] === "300", 1000);
  });

  it("drops every cached check of a realm within a second of accounts.realm.deactivated", async () => {
    const members = accounts.users.filter((u) => u.realm_id === 1 && u.active);
    for (const u of members) expect((await echo(basic(u.email, u.api_key))).status).toBe(200);
    accounts.deactivatedRealms.add(1);
    await publish("accounts.realm.deactivated", 1, { realm_id: 1 });
    for (const u of members) {
      await eventually(async () => (await echo(basic(u.email, u.api_key))).status === 401, 1000);
    }
    expect((await echo(basic(members[0].email, members[0].api_key))).body).toEqual(unauthorized("This organization has been deactivated"));
    accounts.deactivatedRealms.delete(1);
  });

  it("a second gateway drops its in-process copy of a check within a second of accounts.api_key.reset too", async () => {
    const other = await startGateway({
      vars: env.vars,
      routes: TEST_ROUTES,
      overrides: { ACCOUNTS_URL: accounts.url, MESSAGING_URL: messaging.url, RATE_LIMITING_ENABLED: "false" },
    });
    try {
      const user = accounts.users.find((u) => u.email === "othello@zulip.example") ?? accounts.users.find((u) => u.active && u.realm_id === 1)!;
      const auth = basic(user.email, user.api_key);
      const otherEcho = () => call(other.url, "GET", "/api/v1/echo", { headers: { authorization: auth } });
      expect((await echo(auth)).status).toBe(200);
      expect((await otherEcho()).status).toBe(200);
      const previousKey = user.api_key;
      user.api_key = "dddddddddddddddddddddddddddddd44";
      // Both still answer from their copies until the reset is published.
      expect((await otherEcho()).status).toBe(200);
      await publish("accounts.api_key.reset", user.realm_id, { user_id: user.user_id, email: user.email });
      await eventually(async () => (await echo(auth)).status === 401, 1000);
      await eventually(async () => (await otherEcho()).status === 401, 1000);
      user.api_key = previousKey;
    } finally {
      await other.close();
    }
  });

  it("answers repeated requests of a key from its in-process copy, without reading Redis", async () => {
    const user = accounts.users.find((u) => u.email === "iago@zulip.example")!;
    const auth = basic(user.email, user.api_key);
    expect((await echo(auth)).status).toBe(200);
    // The shared entry goes (Redis's command counters are the whole server's, other test files
    // included, so they cannot tell this gateway's reads): a gateway that read Redis now would
    // miss, ask accounts and store the entry again.
    const entry = `gw:auth:entry:${AuthCache.hash(user.email, user.api_key)}`;
    expect(await gw.redis.del(entry)).toBe(1);
    const calls = accounts.authCalls;
    for (let i = 0; i < 5; i++) expect((await echo(auth)).status).toBe(200);
    expect(accounts.authCalls).toBe(calls);
    expect(await gw.redis.exists(entry)).toBe(0);
  });

  it("does not cache a check that raced with an invalidation", async () => {
    const user = accounts.users.find((u) => u.email === "iago@zulip.example")!;
    const cache = new AuthCache(gw.redis, 60, gw.config.REDIS_PREFIX);
    const hash = AuthCache.hash(user.email, "ffffffffffffffffffffffffffffff66");
    const generation = await cache.generation();
    await cache.invalidateUser(user.realm_id, user.user_id);
    const stored = await cache.store(hash, { userId: user.user_id, realmId: user.realm_id, role: 200, isBot: false, email: user.email }, generation);
    expect(stored).toBe(false);
    expect(await cache.get(hash)).toBeNull();
  });
});
