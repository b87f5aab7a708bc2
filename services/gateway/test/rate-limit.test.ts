import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, type TestEnv } from "@chat/testkit";
import { ManualClock } from "@chat/platform";
import { basic, call, deadUrl, startGateway, type FakeService, type RunningGateway } from "./helpers";
import { KEY_A, KEY_B, startEcho, startFakeAccounts, TEST_ROUTES, TEST_USERS, type FakeAccounts } from "./fixtures";

const IAGO = basic("iago@zulip.example", KEY_A);
const HAMLET = basic("hamlet@zulip.example", KEY_B);
const FORM = { "content-type": "application/x-www-form-urlencoded" };
/** A user this file's other tests never authenticate: her credentials are in no cache. */
const CORDELIA_USER = { user_id: 14, realm_id: 1, email: "cordelia@zulip.example", api_key: "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeee5", role: 400, is_bot: false, active: true };

let env: TestEnv;
let accounts: FakeAccounts;
let messaging: FakeService;
let events: FakeService;
let gw: RunningGateway;
const clock = new ManualClock(new Date("2025-01-01T00:00:00Z"));

beforeAll(async () => {
  env = await createTestEnv();
  accounts = await startFakeAccounts(env.vars.INTERNAL_TOKEN, [...TEST_USERS(), CORDELIA_USER]);
  messaging = await startEcho("messaging");
  events = await startEcho("events");
  gw = await startGateway({
    vars: env.vars,
    routes: TEST_ROUTES,
    clock,
    overrides: {
      ACCOUNTS_URL: accounts.url,
      MESSAGING_URL: messaging.url,
      EVENTS_URL: events.url,
      RATE_LIMIT_USER_MAX: "5",
      RATE_LIMIT_USER_WINDOW_SECONDS: "60",
      RATE_LIMIT_IP_MAX: "4",
      RATE_LIMIT_IP_WINDOW_SECONDS: "60",
      RATE_LIMIT_AUTH_MAX: "3",
      RATE_LIMIT_AUTH_WINDOW_SECONDS: "1800",
      // The test's "clients" come from different addresses through one trusted proxy.
      TRUST_PROXY_HOPS: "1",
    },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([accounts?.close(), messaging?.close(), events?.close()]);
  await env?.cleanup();
});

const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

describe("per-user limit", () => {
  it("counts down X-RateLimit-Remaining, then answers 429 with Retry-After until the window moves", async () => {
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: IAGO } });
      expect(res.status).toBe(200);
      expect(res.headers["x-ratelimit-limit"]).toBe("5");
      expect(res.headers["x-ratelimit-reset"]).toBe(String(nowSeconds() + 60));
      seen.push(String(res.headers["x-ratelimit-remaining"]));
      clock.advance(1000);
    }
    expect(seen).toEqual(["4", "3", "2", "1", "0"]);

    const limited = await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: IAGO } });
    expect(limited.status).toBe(429);
    // The oldest request was 5 s ago: it leaves the 60 s window in 55 s.
    expect(limited.body).toEqual({ result: "error", msg: "API usage exceeded rate limit", code: "RATE_LIMIT_HIT", "retry-after": 55 });
    expect(limited.headers["retry-after"]).toBe("55");
    expect(limited.headers["x-ratelimit-remaining"]).toBe("0");
    expect(limited.headers["x-ratelimit-limit"]).toBe("5");

    // Another user has a budget of their own.
    expect((await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: HAMLET } })).status).toBe(200);

    clock.advance(55_000);
    const again = await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: IAGO } });
    expect(again.status).toBe(200);
    expect(again.headers["x-ratelimit-remaining"]).toBe("0");
  });

  it("keeps long polls in a bucket of their own", async () => {
    const user = basic("other@lear.example", "ccccccccccccccccccccccccccccccc3");
    for (let i = 0; i < 5; i++) expect((await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: user } })).status).toBe(200);
    expect((await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: user } })).status).toBe(429);
    const poll = await call(gw.url, "GET", "/api/v1/events", { headers: { authorization: user } });
    expect(poll.status).toBe(200);
    expect(poll.headers["x-ratelimit-remaining"]).toBe("4");
    const deleted = await call(gw.url, "DELETE", "/api/v1/events", { headers: { authorization: user } });
    expect(deleted.status).toBe(200);
    expect(deleted.headers["x-ratelimit-remaining"]).toBe("3");
  });

  it("counts POST /register with the other API requests (Django serves it in Zulip, not the event server)", async () => {
    accounts.users.push({ user_id: 14, realm_id: 1, email: "cordelia@zulip.example", api_key: "fffffffffffffffffffffffffffffff6", role: 400, is_bot: false, active: true });
    const user = basic("cordelia@zulip.example", "fffffffffffffffffffffffffffffff6");
    for (let i = 0; i < 4; i++) expect((await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: user } })).status).toBe(200);
    const register = await call(gw.url, "POST", "/api/v1/register", { headers: { authorization: user } });
    expect(register.status).toBe(200);
    expect(register.headers["x-ratelimit-remaining"]).toBe("0");
    const limited = await call(gw.url, "POST", "/api/v1/register", { headers: { authorization: user } });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("RATE_LIMIT_HIT");
    // The event server's bucket is untouched.
    expect((await call(gw.url, "GET", "/api/v1/events", { headers: { authorization: user } })).headers["x-ratelimit-remaining"]).toBe("4");
  });

  it("lets exactly the limit through when requests arrive at once", async () => {
    const bot = basic("bot@zulip.example", "ddddddddddddddddddddddddddddddd4");
    const results = await Promise.all(Array.from({ length: 20 }, () => call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: bot } })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(15);
    expect(results.filter((r) => r.status === 200).map((r) => r.headers["x-ratelimit-remaining"]).sort()).toEqual(["0", "1", "2", "3", "4"]);
  });

  it("does not count failed authentication against the user", async () => {
    const res = await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: basic("iago@zulip.example", KEY_B) } });
    expect(res.status).toBe(401);
    expect(res.headers["x-ratelimit-limit"]).toBeUndefined();
  });
});

describe("failed credentials per address", () => {
  it("holds back guesses from an address after too many, but not credentials verified just before", async () => {
    const from = (authorization: string) => call(gw.url, "GET", "/api/v1/echo", { headers: { authorization, "x-forwarded-for": "198.51.100.77" } });
    // Hamlet works from this address; then a client there retries a wrong key.
    expect((await from(HAMLET)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await from(basic("hamlet@zulip.example", `wrong-${i}`))).status).toBe(401);
    const guess = await from(basic("iago@zulip.example", "still-wrong"));
    expect(guess.status).toBe(429);
    expect(guess.body.code).toBe("RATE_LIMIT_HIT");
    // A right key nobody used lately is not checked either: it could be a guess.
    expect((await from(basic(CORDELIA_USER.email, CORDELIA_USER.api_key))).status).toBe(429);
    // Hamlet's verified credentials still pass.
    expect((await from(HAMLET)).status).toBe(200);
  });
});

describe("per-IP limit on routes without authentication", () => {
  it("limits each address separately", async () => {
    const from = (ip: string) => call(gw.url, "GET", "/api/v1/open", { headers: { "x-forwarded-for": ip } });
    for (let i = 0; i < 4; i++) {
      const res = await from("203.0.113.7");
      expect(res.status).toBe(200);
      expect(res.headers["x-ratelimit-limit"]).toBe("4");
      expect(res.headers["x-ratelimit-remaining"]).toBe(String(3 - i));
    }
    const limited = await from("203.0.113.7");
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("RATE_LIMIT_HIT");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    expect((await from("203.0.113.8")).status).toBe(200);
  });

  it("counts an IPv6 client by its /64: a fresh address of the same network per request does not get around it", async () => {
    const from = (ip: string) => call(gw.url, "GET", "/api/v1/open", { headers: { "x-forwarded-for": ip } });
    for (let i = 0; i < 4; i++) expect((await from(`2001:db8:7::${(i + 1).toString(16)}`)).status).toBe(200);
    const limited = await from("2001:db8:7::ffff:1");
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("RATE_LIMIT_HIT");
    expect((await from("2001:db8:8::1")).status).toBe(200);
  });

  it("trusts only the configured number of proxies in X-Forwarded-For", async () => {
    // A client cannot dodge its limit by prepending addresses of its own.
    for (let i = 0; i < 4; i++) {
      const res = await call(gw.url, "GET", "/api/v1/open", { headers: { "x-forwarded-for": `10.9.9.${i}, 198.51.100.1` } });
      expect(res.status).toBe(200);
    }
    const res = await call(gw.url, "GET", "/api/v1/open", { headers: { "x-forwarded-for": "10.9.9.99, 198.51.100.1" } });
    expect(res.status).toBe(429);
  });
});

describe("fetch_api_key brute-force limit", () => {
  const attempt = (ip: string, username: string, password: string) =>
    call(gw.url, "POST", "/api/v1/fetch_api_key", {
      headers: { ...FORM, "x-forwarded-for": ip },
      body: new URLSearchParams({ username, password }).toString(),
    });

  it("limits attempts per username, whatever address they come from", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await attempt(`192.0.2.${i + 1}`, "iago@zulip.example", "wrong");
      expect(res.status).toBe(401);
      expect(res.body.code).toBe("AUTHENTICATION_FAILED");
    }
    // Even the right password is refused now, and the case of the username does not help.
    const limited = await attempt("192.0.2.50", "IAGO@zulip.example ", "pw-iago");
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ result: "error", code: "RATE_LIMIT_HIT", msg: "API usage exceeded rate limit" });
    expect(limited.body["retry-after"]).toBeGreaterThan(1700);
    // Other usernames are unaffected.
    const ok = await attempt("192.0.2.51", "hamlet@zulip.example", "pw-hamlet");
    expect(ok.status).toBe(200);
    expect(ok.body.api_key).toBe(KEY_B);
    clock.advance(1800_000);
    expect((await attempt("192.0.2.52", "iago@zulip.example", "pw-iago")).status).toBe(200);
  });

  it("forgets failed attempts after a successful login", async () => {
    for (let i = 0; i < 2; i++) expect((await attempt(`192.0.2.${60 + i}`, "hamlet@zulip.example", "nope")).status).toBe(401);
    expect((await attempt("192.0.2.70", "hamlet@zulip.example", "pw-hamlet")).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await attempt(`192.0.2.${80 + i}`, "hamlet@zulip.example", "nope")).status).toBe(401);
    expect((await attempt("192.0.2.90", "hamlet@zulip.example", "nope")).status).toBe(429);
  });

  it("reads the username from a multipart body too", async () => {
    const boundary = "xyzBOUNDARY";
    const body = [`--${boundary}`, 'Content-Disposition: form-data; name="username"', "", "other@lear.example", `--${boundary}`, 'Content-Disposition: form-data; name="password"', "", "bad", `--${boundary}--`, ""].join("\r\n");
    const send = (ip: string) => call(gw.url, "POST", "/api/v1/fetch_api_key", { headers: { "content-type": `multipart/form-data; boundary=${boundary}`, "x-forwarded-for": ip }, body });
    for (let i = 0; i < 3; i++) expect((await send(`192.0.2.${100 + i}`)).status).toBe(401);
    expect((await send("192.0.2.110")).status).toBe(429);
  });
});

describe("when Redis is down", () => {
  it("keeps serving API requests without cache or limits, but refuses password attempts", async () => {
    const dead = (await deadUrl()).replace("http:", "redis:");
    const blind = await startGateway({
      vars: env.vars,
      routes: TEST_ROUTES,
      redisDown: true,
      overrides: { ACCOUNTS_URL: accounts.url, MESSAGING_URL: messaging.url, REDIS_URL: dead },
    });
    try {
      const start = Date.now();
      const res = await call(blind.url, "GET", "/api/v1/echo", { headers: { authorization: IAGO } });
      expect(res.status).toBe(200);
      expect(res.headers["x-ratelimit-limit"]).toBeUndefined();
      expect(Date.now() - start).toBeLessThan(1000);
      const login = await call(blind.url, "POST", "/api/v1/fetch_api_key", { headers: FORM, body: "username=iago%40zulip.example&password=pw-iago" });
      expect(login.status).toBe(503);
      expect(login.body.code).toBe("SERVICE_UNAVAILABLE");
      const ready = await call(blind.url, "GET", "/ready");
      expect(ready.status).toBe(503);
      expect(ready.body.checks.redis).not.toBe("ok");
    } finally {
      await blind.close();
    }
  });
});
