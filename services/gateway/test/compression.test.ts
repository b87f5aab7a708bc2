import { brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, type TestEnv } from "@chat/testkit";
import { basic, deadUrl, readBody, sendJson, startFake, startGateway, type FakeService, type RunningGateway } from "./helpers";
import { KEY_A, startEcho, startFakeAccounts, TEST_ROUTES, TEST_USERS, type FakeAccounts } from "./fixtures";

const IAGO = basic("iago@zulip.example", KEY_A);

/** A success body of about `size` bytes, as a service answers (with its length). */
const bigAnswer = (size: number) => ({ result: "success", msg: "", realm_users: Array.from({ length: Math.ceil(size / 60) }, (_, i) => ({ user_id: i, full_name: `User ${i}` })) });
const PNG = Buffer.alloc(100_000, 7);

let env: TestEnv;
let accounts: FakeAccounts;
let messaging: FakeService;
let others: FakeService;
let gw: RunningGateway;
let plain: RunningGateway;

async function get(base: string, path: string, acceptEncoding?: string) {
  const res = await request(base + path, { headers: { authorization: IAGO, ...(acceptEncoding ? { "accept-encoding": acceptEncoding } : {}) } });
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

beforeAll(async () => {
  env = await createTestEnv();
  accounts = await startFakeAccounts(env.vars.INTERNAL_TOKEN, TEST_USERS());
  messaging = await startFake(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname.startsWith("/api/v1/user_uploads/")) {
      res.writeHead(200, { "content-type": "image/png", "content-length": String(PNG.length) });
      return void res.end(PNG);
    }
    if (req.method === "POST") {
      const body = await readBody(req);
      return sendJson(res, 200, { result: "success", msg: "", encoding: req.headers["content-encoding"] ?? null, bytes: body.toString("base64") });
    }
    // With its length, as every service's answer has it.
    const json = JSON.stringify(bigAnswer(Number(url.searchParams.get("size"))));
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(json)) });
    res.end(json);
  });
  others = await startEcho("others");
  const overrides = { ACCOUNTS_URL: accounts.url, MESSAGING_URL: messaging.url, EVENTS_URL: others.url, SCHEDULER_URL: await deadUrl(), RATE_LIMITING_ENABLED: "false" };
  gw = await startGateway({ vars: env.vars, routes: TEST_ROUTES, overrides });
  plain = await startGateway({ vars: env.vars, routes: TEST_ROUTES, overrides: { ...overrides, COMPRESS_RESPONSES: "false" } });
});

afterAll(async () => {
  await Promise.all([gw?.close(), plain?.close()]);
  await Promise.all([accounts?.close(), messaging?.close(), others?.close()]);
  await env?.cleanup();
});

describe("compressed answers", () => {
  it("a large JSON answer is gzipped for a client that accepts gzip, and unpacks to the service's JSON", async () => {
    const res = await get(gw.url, "/api/v1/echo?size=30000", "gzip, deflate");
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(String(res.headers.vary)).toMatch(/accept-encoding/i);
    expect(JSON.parse(gunzipSync(res.bytes).toString("utf8"))).toEqual(bigAnswer(30000));
    expect(res.bytes.length).toBeLessThan(30000 / 3);
  });

  it("an answer streamed through (register's state) is compressed too, with brotli where the client prefers it", async () => {
    const res = await get(gw.url, "/api/v1/echo?size=300000", "br, gzip");
    expect(res.headers["content-encoding"]).toBe("br");
    expect(res.headers["content-length"]).toBeUndefined();
    expect(JSON.parse(brotliDecompressSync(res.bytes).toString("utf8"))).toEqual(bigAnswer(300000));
  });

  it("small answers, clients that accept no encoding, and files are sent as they are", async () => {
    const small = await get(gw.url, "/api/v1/echo?size=2000", "gzip");
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(small.bytes.toString("utf8"))).toEqual(bigAnswer(2000));
    const identity = await get(gw.url, "/api/v1/echo?size=30000");
    expect(identity.headers["content-encoding"]).toBeUndefined();
    expect(Number(identity.headers["content-length"])).toBe(identity.bytes.length);
    expect(JSON.parse(identity.bytes.toString("utf8"))).toEqual(bigAnswer(30000));
    const file = await get(gw.url, "/api/v1/user_uploads/1/a.png", "gzip");
    expect(file.headers["content-encoding"]).toBeUndefined();
    expect(file.bytes.equals(PNG)).toBe(true);
  });

  it("is off with COMPRESS_RESPONSES=false (a proxy in front compresses)", async () => {
    const res = await get(plain.url, "/api/v1/echo?size=30000", "gzip");
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(res.bytes.toString("utf8"))).toEqual(bigAnswer(30000));
  });

  it("leaves request bodies to the service, encoded as they came", async () => {
    const packed = gzipSync("content=hello");
    const res = await request(`${gw.url}/api/v1/echo`, {
      method: "POST",
      headers: { authorization: IAGO, "content-type": "application/x-www-form-urlencoded", "content-encoding": "gzip" },
      body: packed,
    });
    expect(res.statusCode).toBe(200);
    const body = (await res.body.json()) as { encoding: string; bytes: string };
    expect(body.encoding).toBe("gzip");
    expect(Buffer.from(body.bytes, "base64").equals(packed)).toBe(true);
  });
});
