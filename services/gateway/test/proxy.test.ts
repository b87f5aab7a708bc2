import http from "node:http";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, type TestEnv } from "@chat/testkit";
import { INTERNAL_HEADERS } from "@chat/platform";
import { basic, call, deadUrl, expectShutdownReleases, readBody, sendJson, startFake, startGateway, type FakeService, type RunningGateway } from "./helpers";
import { KEY_A, startEcho, startFakeAccounts, TEST_ROUTES, TEST_USERS, type FakeAccounts } from "./fixtures";

const IAGO = basic("iago@zulip.example", KEY_A);

/** Hooks the slow and upload fakes use to show data moving before the other side finished. */
const gates = {
  releaseSecondChunk: null as null | (() => void),
  uploadFirstBytes: null as null | (() => void),
  eventsClosed: null as null | (() => void),
  eventsArrived: null as null | (() => void),
};

let env: TestEnv;
let accounts: FakeAccounts;
let messaging: FakeService;
let events: FakeService;
let gw: RunningGateway;

beforeAll(async () => {
  env = await createTestEnv();
  accounts = await startFakeAccounts(env.vars.INTERNAL_TOKEN, TEST_USERS());
  messaging = await startFake(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/api/v1/slow") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first chunk;");
      await new Promise<void>((resolve) => (gates.releaseSecondChunk = resolve));
      res.end("second chunk");
      return;
    }
    if (url.pathname === "/api/v1/upload") {
      const hash = createHash("sha256");
      let size = 0;
      for await (const chunk of req) {
        if (size === 0) gates.uploadFirstBytes?.();
        size += (chunk as Buffer).length;
        hash.update(chunk as Buffer);
      }
      return sendJson(res, 200, { result: "success", msg: "", size, sha256: hash.digest("hex"), content_type: req.headers["content-type"] });
    }
    if (req.headers.range === "bytes=2-5") {
      // A download's byte range, as messaging answers it.
      res.writeHead(206, { "content-type": "video/mp4", "content-range": "bytes 2-5/10", "accept-ranges": "bytes", "content-length": "4" });
      return void res.end("2345");
    }
    const body = await readBody(req);
    sendJson(res, 200, { result: "success", msg: "", service: "messaging", method: req.method, url: req.url, headers: req.headers, body: body.toString("utf8") });
  });
  events = await startFake((req, res) => {
    // A long poll: nothing is answered until the client goes away.
    res.on("close", () => gates.eventsClosed?.());
    gates.eventsArrived?.();
  });
  gw = await startGateway({
    vars: env.vars,
    routes: TEST_ROUTES,
    overrides: {
      ACCOUNTS_URL: accounts.url,
      MESSAGING_URL: messaging.url,
      EVENTS_URL: events.url,
      SCHEDULER_URL: await deadUrl(),
      RATE_LIMITING_ENABLED: "false",
    },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([accounts?.close(), messaging?.close(), events?.close()]);
  await env?.cleanup();
});

describe("routing by the contract table", () => {
  it("forwards to the owning service with the path and query unchanged", async () => {
    const res = await call(gw.url, "GET", "/api/v1/echo?anchor=newest&narrow=%5B%5D", { headers: { authorization: IAGO } });
    expect(res.status).toBe(200);
    expect(res.body.service).toBe("messaging");
    expect(res.body.url).toBe("/api/v1/echo?anchor=newest&narrow=%5B%5D");
    const users = await call(gw.url, "GET", "/api/v1/users/12", { headers: { authorization: IAGO } });
    expect(users.body).toMatchObject({ service: "accounts", path: "/api/v1/users/12" });
  });

  it("prefers literal segments and matches integer ids only on digits", async () => {
    const me = await call(gw.url, "GET", "/api/v1/users/me", { headers: { authorization: IAGO } });
    expect(me.body.path).toBe("/api/v1/users/me");
    const presence = await call(gw.url, "GET", "/api/v1/users/hamlet%40zulip.example/presence", { headers: { authorization: IAGO } });
    expect(presence.status).toBe(200);
    const notAnId = await call(gw.url, "GET", "/api/v1/users/abc", { headers: { authorization: IAGO } });
    expect(notAnId.status).toBe(404);
  });

  it("answers an unknown path with Zulip's JSON 404, before asking for credentials", async () => {
    const authCalls = accounts.authCalls;
    for (const path of ["/api/v1/nope", "/api/v1/echo/extra", "/api/v1/", "/api/v2/echo", "/nothing"]) {
      const res = await call(gw.url, "GET", path);
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ result: "error", msg: "Not Found", code: "BAD_REQUEST" });
    }
    expect(accounts.authCalls).toBe(authCalls);
  });

  it("never exposes service-to-service routes", async () => {
    const res = await call(gw.url, "POST", "/api/v1/internal/secret", { headers: { authorization: IAGO } });
    expect(res.status).toBe(404);
  });

  it("answers a known path with a wrong method with 405 and the allowed methods", async () => {
    const res = await call(gw.url, "PUT", "/api/v1/echo");
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ result: "error", msg: "Method Not Allowed", allowed_methods: ["DELETE", "GET", "POST"] });
    const users = await call(gw.url, "DELETE", "/api/v1/users/5");
    expect(users.body.allowed_methods).toEqual(["GET", "PATCH"]);
  });

  it("serves HEAD through the GET route, and answers OPTIONS with 204 and the path's methods without credentials", async () => {
    const head = await call(gw.url, "HEAD", "/api/v1/echo", { headers: { authorization: IAGO } });
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    const authCalls = accounts.authCalls;
    const options = await call(gw.url, "OPTIONS", "/api/v1/echo");
    expect(options.status).toBe(204);
    expect(options.text).toBe("");
    expect(options.headers.allow).toBe("DELETE, GET, HEAD, POST");
    const user = await call(gw.url, "OPTIONS", "/api/v1/users/5");
    expect(user.headers.allow).toBe("GET, HEAD, PATCH");
    expect(accounts.authCalls).toBe(authCalls);
    const unknown = await call(gw.url, "OPTIONS", "/api/v1/nope");
    expect(unknown.status).toBe(404);
  });

  it("serves upload downloads at the root path too, with the same credentials", async () => {
    const res = await call(gw.url, "GET", "/user_uploads/2/photo.png?x=1", { headers: { authorization: IAGO } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ service: "messaging", url: "/api/v1/user_uploads/2/photo.png?x=1" });
    expect((await call(gw.url, "GET", "/user_uploads/2/photo.png")).status).toBe(401);
    // Long file names are common: the whole path must reach the router, not just 100 characters.
    const long = `/user_uploads/2/${"a".repeat(300)}.png`;
    const res2 = await call(gw.url, "GET", long, { headers: { authorization: IAGO } });
    expect(res2.status).toBe(200);
    expect(res2.body.url).toBe(`/api/v1${long}`);
  });

  it("passes a download's byte range both ways (Range in, 206 and Content-Range out)", async () => {
    const res = await fetch(`${gw.url}/user_uploads/2/clip.mp4`, { headers: { authorization: IAGO, range: "bytes=2-5" } });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe("bytes 2-5/10");
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(await res.text()).toBe("2345");
  });

  it("serves the contracts' own table by default (routes added later need no gateway change)", async () => {
    const plain = await startGateway({ vars: env.vars, overrides: { ACCOUNTS_URL: accounts.url, RATE_LIMITING_ENABLED: "false" } });
    try {
      const res = await call(plain.url, "GET", "/api/v1/server_settings");
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ service: "accounts", path: "/api/v1/server_settings" });
      const internal = await call(plain.url, "POST", "/api/v1/internal/authenticate", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "email=a&api_key=b" });
      expect(internal.status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe("method override: a POST whose form says `method` is served as that method (Zulip)", () => {
  const form = (body: string) => ({ headers: { authorization: IAGO, "content-type": "application/x-www-form-urlencoded" }, body });
  const multipart = (fields: Record<string, string>) => {
    const boundary = "----chat-test-boundary";
    const body = Object.entries(fields).map(([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join("") + `--${boundary}--\r\n`;
    return { headers: { authorization: IAGO, "content-type": `multipart/form-data; boundary=${boundary}` }, body };
  };

  it("forwards as DELETE with the rest of the form, urlencoded or multipart", async () => {
    const res = await call(gw.url, "POST", "/api/v1/echo?q=1", form("token=abc&method=DELETE&x=%C3%A9"));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ method: "DELETE", url: "/api/v1/echo?q=1", body: "token=abc&x=%C3%A9" });
    expect(res.body.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    const multi = await call(gw.url, "POST", "/api/v1/echo", multipart({ token: "déf", method: "DELETE" }));
    expect(multi.body).toMatchObject({ method: "DELETE", body: "token=d%C3%A9f" });
  });

  it("moves the form into the query string for GET", async () => {
    const res = await call(gw.url, "POST", "/api/v1/echo?anchor=newest", multipart({ method: "GET", num_before: "5" }));
    expect(res.body).toMatchObject({ method: "GET", url: "/api/v1/echo?anchor=newest&num_before=5", body: "" });
  });

  it("answers 405 for a method the path does not serve, and passes a form without `method` on untouched", async () => {
    const res = await call(gw.url, "POST", "/api/v1/echo", form("method=PATCH&a=1"));
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ result: "error", msg: "Method Not Allowed", allowed_methods: ["DELETE", "GET", "POST"] });
    const plain = multipart({ methods: "DELETE", note: "method=DELETE" });
    const kept = await call(gw.url, "POST", "/api/v1/echo", plain);
    expect(kept.body).toMatchObject({ method: "POST", body: plain.body });
    expect(kept.body.headers["content-type"]).toBe(plain.headers["content-type"]);
  });

  it("leaves POST-only paths streaming (an upload whose form names a method stays a POST)", async () => {
    const res = await call(gw.url, "POST", "/api/v1/upload", multipart({ method: "DELETE" }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ size: expect.any(Number) });
  });
});

describe("headers on the internal hop", () => {
  it("replaces client-sent x-chat-* headers with the authenticated identity and drops the credentials", async () => {
    const res = await call(gw.url, "GET", "/api/v1/echo", {
      headers: {
        authorization: IAGO,
        [INTERNAL_HEADERS.userId]: "1",
        [INTERNAL_HEADERS.realmId]: "2",
        [INTERNAL_HEADERS.role]: "100",
        [INTERNAL_HEADERS.token]: "forged-token-forged-token",
        "x-chat-anything": "x",
        "user-agent": "ZulipMobile/27.1 (Android 14)",
      },
    });
    const h = res.body.headers;
    expect(h[INTERNAL_HEADERS.userId]).toBe("11");
    expect(h[INTERNAL_HEADERS.realmId]).toBe("1");
    expect(h[INTERNAL_HEADERS.role]).toBe("200");
    expect(h[INTERNAL_HEADERS.isBot]).toBe("0");
    expect(decodeURIComponent(h[INTERNAL_HEADERS.email])).toBe("iago@zulip.example");
    expect(h[INTERNAL_HEADERS.token]).toBe(env.vars.INTERNAL_TOKEN);
    expect(h[INTERNAL_HEADERS.client]).toBe("ZulipMobile");
    expect(h["x-chat-anything"]).toBeUndefined();
    expect(h.authorization).toBeUndefined();
    expect(h["user-agent"]).toBe("ZulipMobile/27.1 (Android 14)");
  });

  it("sends only the internal token on unauthenticated routes, whatever the client claims", async () => {
    const res = await call(gw.url, "GET", "/api/v1/open", { headers: { [INTERNAL_HEADERS.userId]: "11", [INTERNAL_HEADERS.role]: "100", authorization: IAGO } });
    expect(res.status).toBe(200);
    expect(res.body.headers[INTERNAL_HEADERS.userId]).toBeUndefined();
    expect(res.body.headers[INTERNAL_HEADERS.role]).toBeUndefined();
    expect(res.body.headers[INTERNAL_HEADERS.token]).toBe(env.vars.INTERNAL_TOKEN);
  });

  it("names the client from the client parameter, else the User-Agent, else Unspecified", async () => {
    const byParam = await call(gw.url, "GET", "/api/v1/echo?client=website", { headers: { authorization: IAGO, "user-agent": "curl/8.5" } });
    expect(byParam.body.headers[INTERNAL_HEADERS.client]).toBe("website");
    const byAgent = await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: IAGO, "user-agent": "curl/8.5" } });
    expect(byAgent.body.headers[INTERNAL_HEADERS.client]).toBe("curl");
    const none = await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: IAGO, "user-agent": "" } });
    expect(none.body.headers[INTERNAL_HEADERS.client]).toBe("Unspecified");
  });

  it("carries the request id to the service and back", async () => {
    const res = await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: IAGO, "x-request-id": "req-abc-123" } });
    expect(res.body.headers["x-request-id"]).toBe("req-abc-123");
    expect(res.headers["x-request-id"]).toBe("req-abc-123");
    const fresh = await call(gw.url, "GET", "/api/v1/echo", { headers: { authorization: IAGO } });
    expect(fresh.body.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(fresh.headers["x-request-id"]).toBe(fresh.body.headers["x-request-id"]);
  });

  it("passes form bodies through unparsed, for every method", async () => {
    const body = "content=hello%20world&to=%5B1%2C2%5D&client=test";
    for (const method of ["POST", "DELETE"]) {
      const res = await call(gw.url, method, "/api/v1/echo", { headers: { authorization: IAGO, "content-type": "application/x-www-form-urlencoded" }, body });
      expect(res.status).toBe(200);
      expect(res.body.method).toBe(method);
      expect(res.body.body).toBe(body);
      expect(res.body.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    }
    const json = await call(gw.url, "POST", "/api/v1/echo", { headers: { authorization: IAGO, "content-type": "application/json" }, body: '{"a":1}' });
    expect(json.body.body).toBe('{"a":1}');
    const untyped = await call(gw.url, "POST", "/api/v1/echo", { headers: { authorization: IAGO }, body: "raw" });
    expect(untyped.body.body).toBe("raw");
  });
});

describe("upstream connections", () => {
  it("keeps its connection to a service across requests with bodies, whatever the method", async () => {
    // Zulip clients send DELETE with a form body (DELETE /events, unsubscribing); undici closes
    // the connection after a DELETE with a body unless told the service handles it.
    let opened = 0;
    const count = () => void opened++;
    messaging.server.on("connection", count);
    try {
      for (const method of ["DELETE", "POST"]) {
        for (let i = 0; i < 5; i++) {
          const res = await call(gw.url, method, "/api/v1/echo", {
            headers: { authorization: IAGO, "content-type": "application/x-www-form-urlencoded" },
            body: `queue_id=q${i}`,
          });
          expect(res.body.body).toBe(`queue_id=q${i}`);
        }
      }
    } finally {
      messaging.server.off("connection", count);
    }
    expect(opened).toBeLessThanOrEqual(1);
  });
});

describe("streaming", () => {
  it("delivers a slow response chunk by chunk", async () => {
    const received: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${gw.url}/api/v1/slow`, { headers: { authorization: IAGO } }, (res) => {
        expect(res.statusCode).toBe(200);
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          received.push(chunk);
          // The first chunk arrived while the upstream still holds the rest back.
          if (received.length === 1) gates.releaseSecondChunk?.();
        });
        res.on("end", resolve);
        res.on("error", reject);
      });
      req.on("error", reject);
    });
    expect(received[0]).toBe("first chunk;");
    expect(received.join("")).toBe("first chunk;second chunk");
  });

  it("streams a large multipart upload to the service before the client finished sending it", async () => {
    const boundary = "----chatboundary42";
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const blob = Buffer.alloc(8 * 1024 * 1024, 7);
    const whole = Buffer.concat([head, blob, tail]);
    const firstBytesSeen = new Promise<void>((resolve) => (gates.uploadFirstBytes = resolve));
    const result = await new Promise<any>((resolve, reject) => {
      const req = http.request(
        `${gw.url}/api/v1/upload`,
        { method: "POST", headers: { authorization: IAGO, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(whole.length) } },
        async (res) => resolve(JSON.parse((await readBody(res)).toString("utf8"))),
      );
      req.on("error", reject);
      req.write(whole.subarray(0, 64 * 1024));
      // Only once the service has bytes in hand does the client send the rest.
      void firstBytesSeen.then(() => req.end(whole.subarray(64 * 1024)));
    });
    expect(result.size).toBe(whole.length);
    expect(result.sha256).toBe(createHash("sha256").update(whole).digest("hex"));
    expect(result.content_type).toBe(`multipart/form-data; boundary=${boundary}`);
  });

  it("holds a long poll open and releases the upstream when the client leaves", async () => {
    const closed = new Promise<void>((resolve) => (gates.eventsClosed = resolve));
    const arrived = new Promise<void>((resolve) => (gates.eventsArrived = resolve));
    const req = http.get(`${gw.url}/api/v1/events?queue_id=q&last_event_id=-1`, { headers: { authorization: IAGO } });
    req.on("error", () => {});
    // Leaves once the poll is held upstream (a fixed wait raced a busy machine's authentication).
    await arrived;
    req.destroy();
    await closed;
  });
});

describe("shutdown", () => {
  it("releases held long polls with a 503 instead of waiting for them", async () => {
    const leaving = await startGateway({
      vars: env.vars,
      routes: TEST_ROUTES,
      overrides: { ACCOUNTS_URL: accounts.url, EVENTS_URL: events.url, RATE_LIMITING_ENABLED: "false" },
    });
    const arrived = new Promise<void>((resolve) => (gates.eventsArrived = resolve));
    const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = http.get(`${leaving.url}/api/v1/events?queue_id=q`, { headers: { authorization: IAGO } }, async (res) =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse((await readBody(res)).toString("utf8")) }),
      );
      req.on("error", reject);
    });
    await arrived;
    await expectShutdownReleases(leaving, answer);
  });
});

describe("when a service is down", () => {
  it("answers 503 SERVICE_UNAVAILABLE quickly instead of hanging", async () => {
    const start = Date.now();
    const res = await call(gw.url, "GET", "/api/v1/scheduled", { headers: { authorization: IAGO } });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ result: "error", code: "SERVICE_UNAVAILABLE" });
    expect(Date.now() - start).toBeLessThan(3000);
  });
});

describe("operations endpoints", () => {
  it("serves /health, /ready and /metrics", async () => {
    expect((await call(gw.url, "GET", "/health")).body).toMatchObject({ status: "ok", service: "gateway" });
    const ready = await call(gw.url, "GET", "/ready");
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ redis: "ok", accounts: "ok" });
    const metrics = await call(gw.url, "GET", "/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain("http_requests_total");
    // Proxied requests are counted per contract route, with the upstream's status.
    expect(metrics.text).toMatch(/http_requests_total\{[^}]*route="\/api\/v1\/users\/:user_id"[^}]*status="200"/);
    expect(metrics.text).toMatch(/http_requests_total\{[^}]*route="\/api\/v1\/scheduled"[^}]*status="503"/);
  });

  it("is not ready when accounts does not answer", async () => {
    const blind = await startGateway({ vars: env.vars, overrides: { ACCOUNTS_URL: await deadUrl() } });
    try {
      const ready = await call(blind.url, "GET", "/ready");
      expect(ready.status).toBe(503);
      expect(ready.body.checks.redis).toBe("ok");
      expect(ready.body.checks.accounts).not.toBe("ok");
    } finally {
      await blind.close();
    }
  });
});
