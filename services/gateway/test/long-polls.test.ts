import http from "node:http";
import type http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { createTestEnv, parseMetrics, sampleSum, type TestEnv } from "@chat/testkit";
import { createLogger, createServer, INTERNAL_HEADERS, setStreamRoute } from "@chat/platform";
import { basic, call, deadUrl, eventually, expectShutdownReleases, readBody, startGateway, type RunningGateway } from "./helpers";
import { KEY_A, startFakeAccounts, TEST_ROUTES, TEST_USERS, type FakeAccounts } from "./fixtures";

/**
 * Held long polls go to the events service as HTTP/2 streams over a few connections. The
 * stand-in events service here is built like the real one (platform's server with `http2`): it
 * takes streams whose queue id starts with `hold` (held until the test answers them) or `now`
 * (answered at once), refuses the rest with 421, and answers over HTTP/1.1 with `via: "http/1.1"`.
 */

const IAGO = basic("iago@zulip.example", KEY_A);

interface Held {
  path: string;
  headers: http2.IncomingHttpHeaders;
  stream: http2.ServerHttp2Stream;
  closed: Promise<void>;
}

let env: TestEnv;
let accounts: FakeAccounts;
let events: FastifyInstance;
let eventsUrl: string;
let gw: RunningGateway;
const held: Held[] = [];
let connections = 0;

beforeAll(async () => {
  env = await createTestEnv();
  accounts = await startFakeAccounts(env.vars.INTERNAL_TOKEN, TEST_USERS());
  events = createServer({ name: "fake-events", logger: createLogger("fake-events", "silent"), internalToken: env.vars.INTERNAL_TOKEN, http2: true });
  events.get("/api/v1/events", async (req) => ({ result: "success", msg: "", via: "http/1.1", url: req.url }));
  setStreamRoute(events, (stream, headers) => {
    const path = String(headers[":path"]);
    const queue = new URL(path, "http://x").searchParams.get("queue_id") ?? "";
    if (queue.startsWith("now")) {
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.end(JSON.stringify({ result: "success", msg: "", via: "h2", path, identity: headers[INTERNAL_HEADERS.userId], auth: headers.authorization ?? null }));
      return true;
    }
    if (queue.startsWith("big")) {
      // A poll after a long absence: more than the gateway reads whole, so it streams through.
      const body = JSON.stringify({ result: "success", msg: "", events: Array.from({ length: 3000 }, (_, id) => ({ id, type: "custom", pad: "x".repeat(60) })) });
      stream.respond({ ":status": 200, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      stream.end(body);
      return true;
    }
    if (!queue.startsWith("hold")) return false;
    held.push({ path, headers, stream, closed: new Promise((resolve) => stream.once("close", () => resolve())) });
    return true;
  });
  await events.listen({ host: "127.0.0.1", port: 0 });
  events.server.on("connection", () => connections++);
  eventsUrl = `http://127.0.0.1:${(events.server.address() as AddressInfo).port}`;
  gw = await startGateway({
    vars: env.vars,
    routes: TEST_ROUTES,
    overrides: { ACCOUNTS_URL: accounts.url, EVENTS_URL: eventsUrl, RATE_LIMITING_ENABLED: "false" },
  });
});

afterAll(async () => {
  await gw?.close();
  await events?.close();
  await accounts?.close();
  await env?.cleanup();
});

/** Another gateway in front of the stand-ins, with `overrides` on top of the test's settings. */
const gatewayWith = (overrides: Record<string, string>) =>
  startGateway({ vars: env.vars, routes: TEST_ROUTES, overrides: { ACCOUNTS_URL: accounts.url, EVENTS_URL: eventsUrl, RATE_LIMITING_ENABLED: "false", ...overrides } });

/** A GET through the gateway that resolves with its answer (held polls: once the fake answers). */
function pollThrough(url: string, path: string): { answer: Promise<{ status: number; body: any }>; req: http.ClientRequest } {
  let req!: http.ClientRequest;
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req = http.get(`${url}${path}`, { headers: { authorization: IAGO } }, async (res) =>
      resolve({ status: res.statusCode ?? 0, body: JSON.parse((await readBody(res)).toString("utf8")) }),
    );
    req.on("error", reject);
  });
  return { answer, req };
}

describe("long polls over HTTP/2", () => {
  it("a poll reaches the events service as an HTTP/2 stream with the caller's identity, and its answer comes back", async () => {
    const res = await call(gw.url, "GET", "/api/v1/events?queue_id=now-1&last_event_id=-1", { headers: { authorization: IAGO } });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.body).toMatchObject({ via: "h2", path: "/api/v1/events?queue_id=now-1&last_event_id=-1", auth: null });
    expect(res.body.identity).toEqual(expect.any(String));
  });

  it("many held polls share the gateway's few connections, and each gets its own answer", async () => {
    const before = connections;
    const from = held.length;
    const polls = Array.from({ length: 12 }, (_, i) => pollThrough(gw.url, `/api/v1/events?queue_id=hold-${i}&last_event_id=-1`));
    await eventually(async () => held.length === from + 12, 5000);
    // EVENTS_HTTP2_CONNECTIONS is 4 by default; over HTTP/1.1 these were 12 connections.
    expect(connections - before).toBeLessThanOrEqual(4);
    // Operators see both on /metrics.
    const metrics = parseMetrics((await call(gw.url, "GET", "/metrics")).text);
    const gauge = (name: string) => sampleSum(metrics, name, {});
    expect(gauge("gateway_held_polls")).toBe(12);
    expect(gauge("gateway_events_http2_connections")).toBeGreaterThanOrEqual(1);
    expect(gauge("gateway_events_http2_connections")).toBeLessThanOrEqual(4);
    for (const h of held.slice(from)) {
      h.stream.respond({ ":status": 200, "content-type": "application/json" });
      h.stream.end(JSON.stringify({ result: "success", msg: "", queue: new URL(h.path, "http://x").searchParams.get("queue_id") }));
    }
    const answers = await Promise.all(polls.map((p) => p.answer));
    answers.forEach((a, i) => expect(a).toEqual({ status: 200, body: { result: "success", msg: "", queue: `hold-${i}` } }));
  });

  it("an answer larger than the gateway reads whole streams through complete", async () => {
    const res = await call(gw.url, "GET", "/api/v1/events?queue_id=big-1&last_event_id=-1", { headers: { authorization: IAGO } });
    expect(res.status).toBe(200);
    expect(res.text.length).toBeGreaterThan(200 * 1024);
    expect(res.body.events).toHaveLength(3000);
    expect(res.body.events[2999]).toMatchObject({ id: 2999, type: "custom" });
  });

  it("a poll the events service refuses over HTTP/2 (421) is repeated over HTTP/1.1", async () => {
    const res = await call(gw.url, "GET", "/api/v1/events?queue_id=other&last_event_id=-1", { headers: { authorization: IAGO } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ via: "http/1.1", url: "/api/v1/events?queue_id=other&last_event_id=-1" });
  });

  it("polls that cannot be held (no queue id, dont_block) go over HTTP/1.1 at once", async () => {
    const from = held.length;
    for (const path of ["/api/v1/events?queue_id=hold-x&dont_block=true", "/api/v1/events?dont_block=true&event_types=%5B%5D"]) {
      const res = await call(gw.url, "GET", path, { headers: { authorization: IAGO } });
      expect(res.body).toMatchObject({ via: "http/1.1", url: path });
    }
    expect(held.length).toBe(from);
  });

  it("a client hanging up cancels its stream at the events service", async () => {
    const from = held.length;
    const { req, answer } = pollThrough(gw.url, "/api/v1/events?queue_id=hold-leaving&last_event_id=-1");
    answer.catch(() => {});
    await eventually(async () => held.length === from + 1, 5000);
    req.destroy();
    await held[from].closed;
    expect(held[from].stream.headersSent).toBe(false);
  });

  it("with EVENTS_HTTP2_CONNECTIONS=0 polls go over HTTP/1.1", async () => {
    const plain = await gatewayWith({ EVENTS_HTTP2_CONNECTIONS: "0" });
    try {
      const res = await call(plain.url, "GET", "/api/v1/events?queue_id=now-2&last_event_id=-1", { headers: { authorization: IAGO } });
      expect(res.body).toMatchObject({ via: "http/1.1" });
    } finally {
      await plain.close();
    }
  });

  it("an events service that is down is a 503, as over HTTP/1.1", async () => {
    const blind = await gatewayWith({ EVENTS_URL: await deadUrl() });
    try {
      const res = await call(blind.url, "GET", "/api/v1/events?queue_id=hold-1&last_event_id=-1", { headers: { authorization: IAGO } });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ result: "error", code: "SERVICE_UNAVAILABLE" });
    } finally {
      await blind.close();
    }
  });

  it("shutting down the gateway releases polls held over HTTP/2 with a 503", async () => {
    const leaving = await gatewayWith({});
    const from = held.length;
    const { answer } = pollThrough(leaving.url, "/api/v1/events?queue_id=hold-shutdown&last_event_id=-1");
    await eventually(async () => held.length === from + 1, 5000);
    await expectShutdownReleases(leaving, answer);
    await held[from].closed;
  });
});
