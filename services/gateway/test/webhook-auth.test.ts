import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, type TestEnv } from "@chat/testkit";
import { INTERNAL_HEADERS } from "@chat/platform";
import { basic, call, eventually, readBody, sendJson, startFake, startGateway, type FakeService, type RunningGateway } from "./helpers";
import { KEY_A, KEY_B, startFakeAccounts, TEST_ROUTES, TEST_USERS, type FakeAccounts } from "./fixtures";

/**
 * Integration URLs (`incomingWebhook` routes): the key comes as an `api_key` parameter, in the
 * query string or a form body, with Zulip's codes for a wrong one; HTTP Basic still works there,
 * and nowhere else does the parameter count as credentials.
 */

let env: TestEnv;
let accounts: FakeAccounts;
let messaging: FakeService;
let gw: RunningGateway;
/** The user id of each request that reached messaging, as it arrived (before its body was read). */
const arrivals: string[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  accounts = await startFakeAccounts(env.vars.INTERNAL_TOKEN, TEST_USERS());
  // An echo of what it got, as fixtures' startEcho, that notes each request as it arrives.
  messaging = await startFake(async (req, res) => {
    arrivals.push(String(req.headers[INTERNAL_HEADERS.userId]));
    const body = await readBody(req);
    sendJson(res, 200, { result: "success", msg: "", url: req.url, headers: req.headers, body: body.toString("utf8") });
  });
  gw = await startGateway({
    vars: env.vars,
    routes: TEST_ROUTES,
    overrides: { ACCOUNTS_URL: accounts.url, MESSAGING_URL: messaging.url, RATE_LIMITING_ENABLED: "false" },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([accounts?.close(), messaging?.close()]);
  await env?.cleanup();
});

const JSON_TYPE = { "content-type": "application/json" };
const hook = (query: string, opts: { headers?: Record<string, string>; body?: string } = {}) =>
  call(gw.url, "POST", `/api/v1/external/test${query}`, { headers: { ...JSON_TYPE, ...opts.headers }, body: opts.body ?? '{"a": 1}' });

describe("an integration URL's api_key", () => {
  it("in the query string authenticates its user; the body reaches the service as sent", async () => {
    const res = await hook(`?api_key=${KEY_B}&stream=alerts`, { body: '{"alerts": [1, 2]}' });
    expect(res.status).toBe(200);
    const seen = res.body as any;
    expect(seen.headers[INTERNAL_HEADERS.userId]).toBe("12");
    expect(seen.url).toBe(`/api/v1/external/test?api_key=${KEY_B}&stream=alerts`);
    expect(seen.body).toBe('{"alerts": [1, 2]}');
  });

  it("in a form body authenticates too (Slack's clients post one), and the form is passed on unchanged", async () => {
    const form = new URLSearchParams({ api_key: KEY_A, payload: '{"text": "hi & bye"}' }).toString();
    const res = await hook("?stream=alerts", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: form });
    expect(res.status).toBe(200);
    expect((res.body as any).headers[INTERNAL_HEADERS.userId]).toBe("11");
    expect((res.body as any).body).toBe(form);
  });

  it("in a multipart form is read by a parser: a body crafted to make a pattern backtrack is answered at once", async () => {
    const type = "multipart/form-data; boundary=b";
    const form = `--b\r\ncontent-disposition: form-data; name="payload"\r\n\r\n{}\r\n--b\r\nContent-Disposition: form-data; name="api_key"\r\n\r\n${KEY_A}\r\n--b--\r\n`;
    const res = await hook("?stream=alerts", { headers: { "content-type": type }, body: form });
    expect(res.status).toBe(200);
    expect((res.body as any).headers[INTERNAL_HEADERS.userId]).toBe("11");
    // 70 kB that a pattern over the raw body took a minute over, every other request waiting.
    const crafted = await hook("?stream=alerts", { headers: { "content-type": type }, body: 'content-disposition: name="api_key"'.repeat(2000) });
    expect(crafted.status).toBe(401);
    expect(crafted.body).toEqual({ result: "error", msg: "Not logged in: API authentication or user session required", code: "UNAUTHORIZED" });
  });

  it("wins over HTTP Basic; without it, HTTP Basic works as on any route", async () => {
    const both = await hook(`?api_key=${KEY_A}`, { headers: { authorization: basic("hamlet@zulip.example", KEY_B) } });
    expect((both.body as any).headers[INTERNAL_HEADERS.userId]).toBe("11");
    const basicOnly = await hook("", { headers: { authorization: basic("hamlet@zulip.example", KEY_B) } });
    expect(basicOnly.status).toBe(200);
    expect((basicOnly.body as any).headers[INTERNAL_HEADERS.userId]).toBe("12");
  });

  it("refuses a wrong key with Zulip's webhook codes rather than Basic auth's UNAUTHORIZED", async () => {
    const wrong = await hook(`?api_key=${"z".repeat(32)}`);
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ result: "error", msg: "Invalid API key", code: "INVALID_API_KEY" });
    const malformed = await hook("?api_key=short");
    expect(malformed.status).toBe(401);
    expect(malformed.body).toEqual({ result: "error", msg: "Malformed API key", code: "INVALID_API_KEY" });
    accounts.users.find((u) => u.user_id === 13)!.active = false;
    try {
      const deactivated = await hook("?api_key=ddddddddddddddddddddddddddddddd4");
      expect(deactivated.status).toBe(401);
      expect(deactivated.body).toEqual({ result: "error", msg: "Account is deactivated", code: "USER_DEACTIVATED" });
    } finally {
      accounts.users.find((u) => u.user_id === 13)!.active = true;
    }
  });

  it("without any credentials, asks for them as every route does", async () => {
    const res = await hook("?stream=alerts");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ result: "error", msg: "Not logged in: API authentication or user session required", code: "UNAUTHORIZED" });
  });

  it("is no credential on other routes, and a key checked alone never lets Basic auth in without the right email", async () => {
    const elsewhere = await call(gw.url, "GET", `/api/v1/echo?api_key=${KEY_A}`);
    expect(elsewhere.status).toBe(401);
    expect((elsewhere.body as any).msg).toBe("Not logged in: API authentication or user session required");
    // The key alone is cached now; an empty email with it is still no account.
    expect((await hook(`?api_key=${KEY_A}`)).status).toBe(200);
    const noEmail = await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: basic("", KEY_A) } });
    expect(noEmail.status).toBe(401);
    expect((noEmail.body as any).msg).toBe("Invalid API key");
  });
});

/** A POST whose headers and first bytes go now and whose remaining bytes go when `finish` is called. */
function slowPost(path: string, headers: Record<string, string>, first: string, rest: string) {
  const req = http.request(gw.url + path, { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(first + rest)) } });
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on("response", async (res) => resolve({ status: res.statusCode ?? 0, body: JSON.parse((await readBody(res)).toString("utf8")) }));
    req.on("error", reject);
  });
  req.write(first);
  return { answer, finish: () => req.end(rest) };
}

describe("an integration URL's form body", () => {
  const FORM = { "content-type": "application/x-www-form-urlencoded" };
  const payload = `payload=${encodeURIComponent(JSON.stringify({ text: "x".repeat(100_000) }))}`;

  it("is not waited for when the key is in the query string or HTTP Basic: the request is authenticated at once", async () => {
    for (const [query, headers] of [[`?api_key=${"z".repeat(32)}`, FORM], ["", { ...FORM, authorization: basic("hamlet@zulip.example", "z".repeat(32)) }]] as const) {
      const post = slowPost(`/api/v1/external/test${query}`, headers, payload.slice(0, 1000), payload.slice(1000));
      // Answered while most of the body is still to come.
      const res = await Promise.race([post.answer, new Promise<null>((r) => setTimeout(() => r(null), 1500))]);
      post.finish();
      expect(res).toMatchObject({ status: 401, body: { result: "error", msg: "Invalid API key" } });
    }
  });

  it("streams to the service with a right key in the query string or HTTP Basic, and arrives there unchanged", async () => {
    for (const [query, headers, userId] of [[`?api_key=${KEY_B}`, FORM, "12"], ["", { ...FORM, authorization: basic("iago@zulip.example", KEY_A) }, "11"]] as const) {
      arrivals.length = 0;
      const post = slowPost(`/api/v1/external/test${query}`, headers, payload.slice(0, 1000), payload.slice(1000));
      // The service has the request before the client has sent all of it.
      await eventually(async () => arrivals.length > 0, 1500);
      expect(arrivals).toEqual([userId]);
      post.finish();
      const res = await post.answer;
      expect(res.status).toBe(200);
      expect(res.body.headers[INTERNAL_HEADERS.userId]).toBe(userId);
      expect(res.body.body).toBe(payload);
    }
  });

  it("is read for the key when neither the query string nor HTTP Basic has one", async () => {
    arrivals.length = 0;
    const form = `api_key=${KEY_A}&${payload}`;
    const post = slowPost("/api/v1/external/test?stream=alerts", FORM, form.slice(0, 1000), form.slice(1000));
    await new Promise((r) => setTimeout(r, 200));
    // Nothing goes on before the key is known.
    expect(arrivals).toEqual([]);
    post.finish();
    const res = await post.answer;
    expect(res.status).toBe(200);
    expect(res.body.headers[INTERNAL_HEADERS.userId]).toBe("11");
    expect(res.body.body).toBe(form);
  });
});
