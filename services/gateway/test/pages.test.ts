import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { createTestEnv, type TestEnv } from "@chat/testkit";
import { createLogger, createPool, INTERNAL_HEADERS, InternalClient, ManualClock, type Pool } from "@chat/platform";
import { buildApp as buildAccountsApp } from "../../accounts/src/app";
import { loadAccountsConfig } from "../../accounts/src/config";
import { basic, call, startGateway, type Res, type RunningGateway } from "./helpers";

/**
 * The pages mails link to, through the gateway in front of the real accounts service: every
 * answer is an HTML page that is never cached, the refusals of either included, while the API's
 * refusals stay Zulip's JSON; and the per-IP limit of mails counts the client's address as the
 * gateway sees it behind its trusted proxy, not the gateway's own.
 */

let env: TestEnv;
let pool: Pool;
let accountsApp: FastifyInstance;
let gw: RunningGateway;
let owner: { email: string; api_key: string };
const clock = new ManualClock(new Date("2025-03-01T12:00:00Z"));

beforeAll(async () => {
  env = await createTestEnv();
  await env.migrate("accounts");
  const config = loadAccountsConfig({ ...env.vars, PASSWORD_SCRYPT_COST: "1024" });
  pool = createPool(env.databaseUrl, "accounts", 5);
  accountsApp = buildAccountsApp({ pool, config, clock, log: createLogger("accounts", "silent") });
  await accountsApp.listen({ host: "127.0.0.1", port: 0 });
  const accountsUrl = `http://127.0.0.1:${(accountsApp.server.address() as AddressInfo).port}`;
  gw = await startGateway({
    vars: env.vars,
    clock,
    // One proxy in front: the last X-Forwarded-For entry is the client, whatever comes before it.
    overrides: { ACCOUNTS_URL: accountsUrl, TRUST_PROXY_HOPS: "1", RATE_LIMIT_IP_MAX: "10", RATE_LIMIT_IP_WINDOW_SECONDS: "60" },
  });
  const slug = `pg${Date.now().toString(36)}`;
  const realm = await new InternalClient(accountsUrl, env.vars.INTERNAL_TOKEN).call<any>("POST", "/internal/realms", {
    params: { name: `Pages ${slug}`, owner_email: `owner@${slug}.test`, owner_full_name: "Olivia Owner", owner_password: "owner-pass-1" },
  });
  owner = realm.owner;
});

afterAll(async () => {
  await gw?.close();
  await accountsApp?.close();
  await pool?.end();
  await env?.cleanup();
});

let clients = 0;
/** A client address of its own, so that the gateway's per-IP limit stays out of the way. */
const newClient = () => `198.51.100.${++clients}`;
const FORM = { "content-type": "application/x-www-form-urlencoded" };

/** A browser's request from `ip` (a fresh address by default), through the trusted proxy. */
const browse = (method: string, path: string, opts: { form?: string; ip?: string; headers?: Record<string, string> } = {}) =>
  call(gw.url, method, path, {
    headers: { "x-forwarded-for": opts.ip ?? newClient(), ...(opts.form === undefined ? {} : FORM), ...opts.headers },
    body: opts.form,
  });
const api = (method: string, path: string, opts: { form?: string; auth?: boolean } = {}) =>
  call(gw.url, method, `/api/v1${path}`, {
    headers: { "x-forwarded-for": newClient(), ...(opts.form === undefined ? {} : FORM), ...(opts.auth ? { authorization: basic(owner.email, owner.api_key) } : {}) },
    body: opts.form,
  });

function expectPage(res: Res, status: number, text: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
  expect(res.headers["cache-control"]).toBe("no-store");
  expect(res.text).toContain(text);
}

function expectJson(res: Res, status: number, msg: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(res.body).toMatchObject({ result: "error", msg });
}

const mailCount = async () => Number((await pool.query("SELECT count(*) FROM mail_outbox")).rows[0].count);

describe("a page's refusals are pages", () => {
  it("by the gateway: a wrong method, no such page, a malformed address, the per-IP request limit", async () => {
    const wrongMethod = await browse("DELETE", "/accounts/password/reset/");
    expectPage(wrongMethod, 405, "Method Not Allowed");
    expect(wrongMethod.headers.allow).toBe("GET, POST");
    expectPage(await browse("GET", "/join/"), 404, "Not Found");
    expectPage(await browse("GET", "/accounts/no/such/page"), 404, "Not Found");
    expectPage(await browse("GET", "/join/%E0%A4%A/"), 400, "Malformed URL");

    const ip = newClient();
    for (let i = 0; i < 10; i++) expect((await browse("GET", "/accounts/password/reset/", { ip })).status).toBe(200);
    const limited = await browse("GET", "/accounts/password/reset/", { ip });
    expectPage(limited, 429, "API usage exceeded rate limit");
    expect(limited.headers["retry-after"]).toBe("60");
    expect(limited.text).toContain("Try again in 1 minute.");
  });

  it("by accounts: a key too long, a parameter refused, a field missing, an unknown key", async () => {
    expectPage(await browse("GET", `/accounts/do_confirm/${"k".repeat(3000)}`), 414, "URL path segment too long");
    expectPage(await browse("POST", "/accounts/do_confirm_signup/somekey", { form: "full_name=Ann%00Lee&password=a+long+password" }), 400, "full_name must not contain null bytes");
    expectPage(await browse("POST", "/accounts/password/reset/", { form: "" }), 400, "Please enter a valid email address.");
    expectPage(await browse("GET", "/accounts/do_confirm/not-a-real-key"), 404, "expired");
    expectPage(await browse("GET", "/accounts/confirm_new_email/not-a-real-key"), 404, "expired");
  });

  it("the API's same refusals stay Zulip's JSON", async () => {
    const wrongMethod = await api("DELETE", "/server_settings");
    expectJson(wrongMethod, 405, "Method Not Allowed");
    expect(wrongMethod.body).toEqual({ result: "error", msg: "Method Not Allowed", allowed_methods: ["GET"] });
    expectJson(await api("GET", "/no_such_endpoint"), 404, "Not Found");
    expectJson(await api("GET", `/users/${"1".repeat(3000)}`, { auth: true }), 414, "URL path segment too long");
    expectJson(await api("PATCH", "/settings", { form: "full_name=Ann%00Lee", auth: true }), 400, "full_name must not contain null bytes");
  });
});

/** Sends `request` as it is over a socket to the gateway; its answer, parsed, once the gateway closes. */
function rawRequest(request: string): Promise<{ status: number; reason: string; headers: Record<string, string>; text: string; raw: string }> {
  const { port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), "127.0.0.1", () => socket.write(request));
    let data = "";
    socket.setEncoding("utf8");
    socket.on("data", (c) => (data += c));
    socket.on("error", reject);
    socket.on("close", () => {
      const end = data.indexOf("\r\n\r\n");
      const [statusLine, ...lines] = data.slice(0, end).split("\r\n");
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      const [, status, ...reason] = statusLine.split(" ");
      resolve({ status: Number(status), reason: reason.join(" "), headers, text: data.slice(end + 4), raw: data });
    });
  });
}

describe("requests node's HTTP parser refuses, on a page's path and on the API's", () => {
  /** Past node's limit on the request line and headers together (16 KiB). */
  const OVER = "k".repeat(20_000);

  it("a request line or headers too large: a 431 page below /accounts and /join, Zulip's JSON elsewhere", async () => {
    for (const request of [
      `GET /accounts/do_confirm/${OVER} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
      `GET /join/${OVER}/ HTTP/1.1\r\nHost: localhost\r\n\r\n`,
      `GET /accounts/password/reset/ HTTP/1.1\r\nHost: localhost\r\nCookie: c=${OVER}\r\n\r\n`,
      // After a first request on the same connection.
      `GET /accounts/password/reset/ HTTP/1.1\r\nHost: localhost\r\n\r\nPOST /accounts/password/reset/ HTTP/1.1\r\nHost: localhost\r\nX-Big: ${OVER}\r\n\r\n`,
    ]) {
      const res = await rawRequest(request);
      // The last answer on the connection (a first request's comes before it).
      const last = res.raw.slice(res.raw.lastIndexOf("HTTP/1.1 "));
      expect(last, request.slice(0, 40)).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
      expect(last).toMatch(/\r\ncontent-type: text\/html; charset=utf-8\r\n/);
      const page = last.slice(last.indexOf("\r\n\r\n"));
      expect(page).toContain("Request header fields too large");
      expect(page).not.toContain(OVER.slice(0, 100));
    }
    const single = await rawRequest(`GET /accounts/do_confirm/${OVER} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expect(single.status).toBe(431);
    expect(single.reason).toBe("Request Header Fields Too Large");
    expect(single.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(single.headers["cache-control"]).toBe("no-store");
    expect(single.text).toContain("<title>Request too large</title>");

    for (const request of [`GET /api/v1/users/${OVER} HTTP/1.1\r\nHost: localhost\r\n\r\n`, `GET /api/v1/server_settings HTTP/1.1\r\nHost: localhost\r\nX-Big: ${OVER}\r\n\r\n`]) {
      const res = await rawRequest(request);
      expect(res.status).toBe(431);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      expect(JSON.parse(res.text)).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Request header fields too large" });
    }
  });

  it("an HTTP/1.1 request without a Host header: a 400 page on a page's path, Zulip's JSON elsewhere; HTTP/1.0 needs none", async () => {
    for (const path of ["/accounts/password/reset/", "/join/somekey/", "/accounts/no/such/page"]) {
      const res = await rawRequest(`GET ${path} HTTP/1.1\r\nX-Forwarded-For: ${newClient()}\r\n\r\n`);
      expect(res.status, path).toBe(400);
      expect(res.headers["content-type"], path).toBe("text/html; charset=utf-8");
      expect(res.headers["cache-control"], path).toBe("no-store");
      expect(res.text, path).toContain("Missing Host header");
    }
    const api = await rawRequest(`GET /api/v1/server_settings HTTP/1.1\r\nX-Forwarded-For: ${newClient()}\r\n\r\n`);
    expect(api.status).toBe(400);
    expect(api.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(api.text)).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Missing Host header" });

    const old = await rawRequest(`GET /accounts/password/reset/ HTTP/1.0\r\nX-Forwarded-For: ${newClient()}\r\n\r\n`);
    expect(old.status).toBe(200);
    expect(old.headers["content-type"]).toBe("text/html; charset=utf-8");
  });
});

describe("mails asked for anonymously, per client address (Zulip's sends_email_by_ip)", () => {
  it("count the address behind the trusted proxy: the sixth is a 429 page and mails nothing, another client is unaffected", async () => {
    const client = "203.0.113.9";
    // What comes before the trusted proxy's entry is the client's say, and changes nothing.
    const from = (i: number) => `10.0.0.${i}, ${client}`;
    for (let i = 0; i < 5; i++) {
      const before = await mailCount();
      expectPage(await browse("POST", "/accounts/password/reset/", { ip: from(i), form: `email=someone${i}%40example.com` }), 200, "Check your email");
      expect(await mailCount()).toBe(before + 1);
    }
    const before = await mailCount();
    // A client's own x-chat-client-ip never reaches accounts.
    const limited = await browse("POST", "/accounts/password/reset/", { ip: from(5), form: "email=someone5%40example.com", headers: { [INTERNAL_HEADERS.clientIp]: "192.0.2.1" } });
    expectPage(limited, 429, "Too many emails were requested from your network today.");
    expect(limited.text).toContain("Try again in 24 hours.");
    expect(await mailCount()).toBe(before);

    expectPage(await browse("POST", "/accounts/password/reset/", { ip: `10.0.0.1, 203.0.113.10`, form: "email=someone5%40example.com" }), 200, "Check your email");
    expect(await mailCount()).toBe(before + 1);
  });
});
