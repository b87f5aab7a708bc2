import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { createTestEnv, type TestEnv } from "@chat/testkit";
import { AmqpClient, createLogger, createPool, InternalClient, OutboxRelay, systemClock, type Pool } from "@chat/platform";
import { buildApp as buildAccountsApp } from "../../accounts/src/app";
import { loadAccountsConfig } from "../../accounts/src/config";
import { basic, call, eventually, startAuthCacheConsumer, startGateway, type FakeService, type RunningGateway } from "./helpers";
import { startEcho } from "./fixtures";

/**
 * The gateway in front of the real accounts service (in-process, listening on a port), with
 * accounts' outbox relayed to RabbitMQ so the gateway's cache reacts to real domain events.
 */
let env: TestEnv;
let pool: Pool;
let accountsApp: FastifyInstance;
let relay: OutboxRelay;
let relayAmqp: AmqpClient;
let consumer: AmqpClient;
let gw: RunningGateway;
/** Stands in for messaging: shows which requests the gateway let through. */
let messaging: FakeService;
let internal: InternalClient;
let org: { realmId: number; owner: { user_id: number; email: string; api_key: string }; member: { user_id: number; email: string; api_key: string } };

beforeAll(async () => {
  env = await createTestEnv();
  await env.migrate("accounts");
  const log = createLogger("accounts", "silent");
  const config = loadAccountsConfig({ ...env.vars, PASSWORD_SCRYPT_COST: "1024" });
  pool = createPool(env.databaseUrl, "accounts", 5);
  accountsApp = buildAccountsApp({ pool, config, clock: systemClock, log });
  await accountsApp.listen({ host: "127.0.0.1", port: 0 });
  const accountsUrl = `http://127.0.0.1:${(accountsApp.server.address() as AddressInfo).port}`;
  relayAmqp = new AmqpClient(env.vars.AMQP_URL, env.vars.AMQP_EXCHANGE, env.vars.AMQP_QUEUE_PREFIX, log);
  await relayAmqp.start();
  relay = new OutboxRelay({ pool, schema: "accounts", amqp: relayAmqp, log, pollMs: 100 });

  messaging = await startEcho("messaging");
  gw = await startGateway({ vars: env.vars, overrides: { ACCOUNTS_URL: accountsUrl, MESSAGING_URL: messaging.url, RATE_LIMIT_AUTH_MAX: "3" } });
  consumer = await startAuthCacheConsumer(gw.config, gw.redis);
  relay.start();

  internal = new InternalClient(accountsUrl, env.vars.INTERNAL_TOKEN);
  const slug = `gw${Date.now().toString(36)}`;
  const realm = await internal.call<any>("POST", "/internal/realms", {
    params: { name: `Gateway ${slug}`, owner_email: `owner@${slug}.test`, owner_full_name: "Olivia Owner", owner_password: "owner-pass-1" },
  });
  const member = await internal.call<any>("POST", "/internal/users", {
    params: { realm_id: realm.realm_id, email: `member@${slug}.test`, full_name: "Mel Member", role: 400, password: "member-pass-1" },
  });
  org = { realmId: realm.realm_id, owner: realm.owner, member };
});

afterAll(async () => {
  await consumer?.close();
  await relay?.stop();
  await relayAmqp?.close();
  await gw?.close();
  await messaging?.close();
  await accountsApp?.close();
  await pool?.end();
  await env?.cleanup();
});

const get = (path: string, auth?: string) => call(gw.url, "GET", `/api/v1${path}`, { headers: auth ? { authorization: auth } : {} });

describe("gateway + accounts", () => {
  it("authenticates a real user and reaches accounts with their identity", async () => {
    const res = await get("/users/me", basic(org.owner.email, org.owner.api_key));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: "success", user_id: org.owner.user_id, email: org.owner.email, role: 100 });
    expect(res.headers["x-ratelimit-limit"]).toBe("200");
    expect(res.headers["x-ratelimit-remaining"]).toBe("199");
    // Email case does not matter, as in Zulip.
    expect((await get("/users/me", basic(org.owner.email.toUpperCase(), org.owner.api_key))).status).toBe(200);
  });

  it("gives accounts' exact failures as 401 UNAUTHORIZED with WWW-Authenticate", async () => {
    const cases: Array<[string, string]> = [
      [basic(org.owner.email, org.member.api_key), "Invalid API key"],
      [basic(`nobody@${org.owner.email.split("@")[1]}`, org.owner.api_key), "Invalid API key"],
      [basic(org.owner.email, "not-a-key"), "Malformed API key"],
    ];
    for (const [auth, msg] of cases) {
      const res = await get("/users/me", auth);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ result: "error", msg, code: "UNAUTHORIZED" });
      expect(res.headers["www-authenticate"]).toBe('Basic realm="zulip"');
    }
  });

  it("lets an incoming-webhook bot's key only send messages: anything else is 401, as in Zulip", async () => {
    const domain = org.owner.email.split("@")[1];
    const bot = (type: number, name: string) =>
      internal.call<any>("POST", "/internal/users", {
        params: { realm_id: org.realmId, email: `${name}-bot@${domain}`, full_name: name, bot_type: type, bot_owner_id: org.owner.user_id },
      });
    const hook = await bot(2, "hook");
    const auth = basic(hook.email, hook.api_key);
    for (const [method, path] of [["GET", "/users/me"], ["POST", "/register"], ["GET", "/messages"], ["GET", "/users/me/subscriptions"]]) {
      const res = await call(gw.url, method, `/api/v1${path}`, { headers: { authorization: auth } });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body).toEqual({ result: "error", msg: "This API is not available to incoming webhook bots.", code: "UNAUTHORIZED" });
      expect(res.headers["www-authenticate"]).toBe('Basic realm="zulip"');
    }
    const sent = await call(gw.url, "POST", "/api/v1/messages", {
      headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
      body: "type=stream&to=1&topic=hooks&content=hi",
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ service: "messaging", method: "POST", url: "/api/v1/messages" });
    // Other bots' keys reach every route.
    const generic = await bot(1, "generic");
    const me = await get("/users/me", basic(generic.email, generic.api_key));
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ user_id: generic.user_id, is_bot: true });
  });

  it("serves server_settings without credentials", async () => {
    const res = await get("/server_settings");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: "success", zulip_feature_level: 267 });
    expect(res.headers["x-ratelimit-limit"]).toBe("100");
  });

  it("fetches an API key with a password and limits guessing per username", async () => {
    const attempt = (password: string) =>
      call(gw.url, "POST", "/api/v1/fetch_api_key", {
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ username: org.member.email, password }).toString(),
      });
    const ok = await attempt("member-pass-1");
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ result: "success", email: org.member.email, user_id: org.member.user_id });
    expect((await get("/users/me", basic(org.member.email, ok.body.api_key))).body.user_id).toBe(org.member.user_id);
    for (let i = 0; i < 3; i++) {
      const res = await attempt("wrong-password");
      expect(res.status).toBe(401);
      expect(res.body.code).toBe("AUTHENTICATION_FAILED");
    }
    const limited = await attempt("member-pass-1");
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("RATE_LIMIT_HIT");
  });

  it("stops accepting an old key within a second of its reset", async () => {
    const auth = basic(org.owner.email, org.owner.api_key);
    expect((await get("/users/me", auth)).status).toBe(200);
    const reset = await internal.call<any>("POST", "/internal/users/api_key/reset", { params: { realm_id: org.realmId, email: org.owner.email } });
    const took = await eventually(async () => (await get("/users/me", auth)).status === 401, 1000);
    expect(took).toBeLessThan(1000);
    expect((await get("/users/me", auth)).body.msg).toBe("Invalid API key");
    expect((await get("/users/me", basic(org.owner.email, reset.api_key))).status).toBe(200);
    org.owner.api_key = reset.api_key;
  });

  it("refuses a user within a second of deactivating their own account", async () => {
    const auth = basic(org.member.email, org.member.api_key);
    expect((await get("/users/me", auth)).status).toBe(200);
    const gone = await call(gw.url, "DELETE", "/api/v1/users/me", { headers: { authorization: auth } });
    expect(gone.status).toBe(200);
    await eventually(async () => (await get("/users/me", auth)).status === 401, 1000);
    expect((await get("/users/me", auth)).body).toEqual({ result: "error", msg: "Account is deactivated", code: "UNAUTHORIZED" });
  });
});
