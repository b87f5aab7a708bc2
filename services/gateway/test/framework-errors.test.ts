import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, type TestEnv } from "@chat/testkit";
import { INTERNAL_HEADERS } from "@chat/platform";
import { basic, call, deadUrl, startGateway, type FakeService, type RunningGateway } from "./helpers";
import { KEY_A, startEcho, startFakeAccounts, TEST_ROUTES, TEST_USERS, type FakeAccounts } from "./fixtures";

/**
 * Requests fastify itself refuses before a route sees them (a path it cannot decode, a body it
 * will not read), as a client of the gateway gets them: Zulip's JSON error, never fastify's
 * text, and never the request's path repeated back.
 */

const IAGO = basic("iago@zulip.example", KEY_A);
const MALFORMED_URL = { result: "error", code: "BAD_REQUEST", msg: "Malformed URL" };
const TOO_LARGE = { result: "error", code: "REQUEST_TOO_LARGE", msg: "Request body too large" };
/** Past the gateway's body limit (5 MiB, as the services'). */
const OVER_LIMIT = 6 * 1024 * 1024;

let env: TestEnv;
let accounts: FakeAccounts;
let messaging: FakeService;
let gw: RunningGateway;

beforeAll(async () => {
  env = await createTestEnv();
  accounts = await startFakeAccounts(env.vars.INTERNAL_TOKEN, TEST_USERS());
  messaging = await startEcho("messaging");
  gw = await startGateway({
    vars: env.vars,
    routes: TEST_ROUTES,
    overrides: { ACCOUNTS_URL: accounts.url, MESSAGING_URL: messaging.url, EVENTS_URL: messaging.url, SCHEDULER_URL: await deadUrl(), RATE_LIMITING_ENABLED: "false" },
  });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([accounts?.close(), messaging?.close()]);
  await env?.cleanup();
});

describe("fastify's own refusals, through the gateway", () => {
  it("a path with a bad percent-encoding is a 400 Malformed URL, whatever the path, without repeating it", async () => {
    const authCalls = accounts.authCalls;
    for (const path of ["/api/v1/realm/domains/%E0%A4%A", "/api/v1/echo%ZZ", "/json/users/%E0", "/%E0%A4%A", "/static/%E0%A4%A"]) {
      const res = await call(gw.url, "GET", path, { headers: { authorization: IAGO } });
      expect(res.status, path).toBe(400);
      expect(res.headers["content-type"], path).toMatch(/^application\/json/);
      expect(res.body, path).toEqual(MALFORMED_URL);
      expect(res.headers[INTERNAL_HEADERS.requestId], path).toEqual(expect.any(String));
    }
    // Refused before admission: nobody was asked who the caller is.
    expect(accounts.authCalls).toBe(authCalls);
  });

  it("a query string with bad escapes is passed on as it came (the service decodes it as Django does)", async () => {
    const res = await call(gw.url, "GET", "/api/v1/echo?topic=%E0%A4%A&b=%zz&%", { headers: { authorization: IAGO } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ service: "messaging", url: "/api/v1/echo?topic=%E0%A4%A&b=%zz&%" });
  });

  it("a JSON body that is not JSON is passed on to the service (only form bodies carry parameters); elsewhere it is a JSON 404", async () => {
    const headers = { authorization: IAGO, "content-type": "application/json" };
    const api = await call(gw.url, "POST", "/api/v1/echo", { headers, body: '{"topic": ' });
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({ service: "messaging", body: '{"topic": ' });
    const elsewhere = await call(gw.url, "POST", "/nowhere", { headers, body: '{"topic": ' });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ result: "error", msg: "Not Found", code: "BAD_REQUEST" });
  });

  it("a Content-Type that cannot be parsed is a JSON 415", async () => {
    for (const path of ["/api/v1/echo", "/nowhere"]) {
      const res = await call(gw.url, "POST", path, { headers: { authorization: IAGO, "content-type": "!!!" }, body: "topic=x" });
      expect(res.status, path).toBe(415);
      expect(res.body, path).toEqual({ result: "error", msg: "Unsupported Media Type", code: "BAD_REQUEST" });
    }
  });

  it("a body over the limit is a 413 REQUEST_TOO_LARGE that reaches the client, on the API and elsewhere, form or not", async () => {
    const cases: Array<[string, string]> = [
      ["/api/v1/echo", "application/x-www-form-urlencoded"],
      ["/api/v1/echo", "application/json"],
      ["/nowhere", "application/x-www-form-urlencoded"],
      // Read by the server's catch-all parser, which used to cut the connection (the client saw a reset).
      ["/nowhere", "application/json"],
      // Not a file, so not under an upload route's own limit: it used to stream on, and the
      // owner's early answer cut the upload short (a 503 at random). Last: the gateway answers
      // before reading the body, and closing it must not wait for that connection.
      ["/api/v1/upload", "text/plain"],
      ["/api/v1/upload", "application/json"],
    ];
    for (const [path, type] of cases) {
      const res = await call(gw.url, "POST", path, { headers: { authorization: IAGO, "content-type": type }, body: "topic=" + "x".repeat(OVER_LIMIT) });
      expect(res.status, `${path} ${type}`).toBe(413);
      expect(res.body, `${path} ${type}`).toEqual(TOO_LARGE);
    }
  });
});
