import http2 from "node:http2";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import pg from "pg";
import { p, route, success, type RouteDef } from "@chat/contracts";
import { parseMetrics, sample, startProxy, type TcpProxy } from "@chat/testkit";
import { ApiError, unauthorized } from "./errors";
import { identityHeaders, INTERNAL_HEADERS, type Identity } from "./identity";
import { InternalClient } from "./internal-client";
import { createMemoryLogger } from "./logger";
import { currentRequestId } from "./request-context";
import { createServer, markShuttingDown, registerRoute, setStreamRoute, type ServerOptions } from "./server";

const TOKEN = "test-internal-token-0123456789";
const ALICE: Identity = { userId: 7, realmId: 3, role: 400, isBot: false, email: "alice@example.com", client: "test" };
const DB_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const Echo = route({
  method: "POST",
  path: "/echo",
  service: "accounts",
  auth: "user",
  params: { topic: p.str().alias("subject"), count: p.int(), flags: p.json(z.array(z.string())).default([]) },
  response: success({ topic: z.string().optional(), count: z.number().optional(), flags: z.array(z.string()) }),
});
const echoOn = (method: RouteDef["method"]) => route({ ...Echo, method, path: `/echo/${method.toLowerCase()}` });
const Item = route({
  method: "GET",
  path: "/items/{item_id}",
  service: "accounts",
  auth: "user",
  params: { item_id: p.int().path() },
  response: success({ item_id: z.number() }),
});
const Open = route({ method: "GET", path: "/open", service: "accounts", auth: "none", params: {}, response: success({ who: z.number().nullable() }) });
const Fails = route({ method: "GET", path: "/fails", service: "accounts", auth: "none", params: { kind: p.str().required() }, response: success({}) });
const Sloppy = route({ method: "GET", path: "/sloppy", service: "accounts", auth: "none", params: {}, response: success({ ok: z.boolean() }) });
const Db = route({ method: "GET", path: "/db", service: "accounts", auth: "none", params: {}, response: success({ one: z.number() }) });
const Outgoing = route({ method: "GET", path: "/outgoing", service: "accounts", auth: "none", params: {}, response: success({ seen: z.string().nullable() }) });

interface Built {
  app: ReturnType<typeof createServer>;
  lines: Array<Record<string, any>>;
}

function build(extra: Partial<ServerOptions> = {}, deps: { pool?: pg.Pool; peerUrl?: string } = {}): Built {
  const { log, lines } = createMemoryLogger("test", "info");
  const app = createServer({ name: "test", logger: log, internalToken: TOKEN, validateResponses: true, ...extra });
  const echo = ({ params }: { params: { topic?: string; count?: number; flags: string[] } }) => params;
  registerRoute(app, Echo, echo);
  for (const m of ["PATCH", "PUT", "DELETE", "GET"] as const) registerRoute(app, echoOn(m), echo);
  registerRoute(app, Item, ({ params }) => ({ item_id: params.item_id }));
  registerRoute(app, Open, ({ identityOrNull }) => ({ who: identityOrNull?.userId ?? null }));
  registerRoute(app, Fails, ({ params }) => {
    if (params.kind === "api") throw new ApiError("RATE_LIMIT_HIT", "API usage exceeded rate limit", { extra: { "retry-after": 1.5 }, headers: { "Retry-After": "1.5" } });
    if (params.kind === "unauthorized") throw unauthorized("Invalid API key");
    if (params.kind === "plain401") throw new ApiError("UNAUTHORIZED", "Account is deactivated");
    if (params.kind === "notfound") throw new ApiError("BAD_REQUEST", "Draft does not exist", { status: 404 });
    const secret = new Error("secret internal detail at /srv/app.ts:42");
    throw secret;
  });
  registerRoute(app, Sloppy, () => ({ ok: true, leaked: "undeclared" }) as never);
  registerRoute(app, Db, async () => {
    const { rows } = await deps.pool!.query("SELECT 1 AS one");
    return { one: rows[0].one };
  });
  registerRoute(app, Outgoing, async () => {
    const peer = new InternalClient(deps.peerUrl!, TOKEN);
    const res = await peer.call<{ seen: string | null }>("GET", "/seen");
    return { seen: res.seen };
  });
  return { app, lines };
}

const auth = (extra: Record<string, string> = {}) => ({ ...identityHeaders(ALICE, TOKEN), ...extra });
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const FORM = { "content-type": "application/x-www-form-urlencoded" };

function multipart(fields: Record<string, string>, file?: { name: string; content: string }) {
  const boundary = "----chatboundary42";
  let body = "";
  for (const [k, v] of Object.entries(fields)) body += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
  if (file) {
    body += `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n${file.content}\r\n`;
  }
  body += `--${boundary}--\r\n`;
  return { payload: body, headers: { "content-type": `multipart/form-data; boundary=${boundary}` } };
}

/** One raw HTTP/1.1 exchange, for requests a well-behaved client would refuse to send. */
function rawHttp(port: number, request: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.end(request));
    let data = "";
    socket.on("data", (c) => (data += c));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head, ...rest] = data.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), body: rest.join("\r\n\r\n") });
    });
  });
}

describe("registerRoute: Zulip parameters over HTTP", () => {
  const { app } = build();
  afterAll(() => app.close());

  it("reads a urlencoded form body and wraps the result in the success envelope", async () => {
    const res = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), ...FORM }, payload: form({ topic: "hi", count: "2", flags: '["read"]' }) });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/application\/json/);
    expect(res.json()).toEqual({ result: "success", msg: "", topic: "hi", count: 2, flags: ["read"] });
  });

  it("reads multipart fields; a stray file part is reported as ignored", async () => {
    const mp = multipart({ topic: "multi", count: "5" }, { name: "attachment", content: "bytes" });
    const res = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), ...mp.headers }, payload: mp.payload });
    expect(res.json()).toEqual({ result: "success", msg: "", topic: "multi", count: 5, flags: [], ignored_parameters_unsupported: ["attachment"] });
  });

  it("takes a multipart field as large as a urlencoded one: up to the body limit, past busboy's 1 MiB", async () => {
    const topic = "t".repeat(2 * 1024 * 1024);
    const mp = multipart({ topic });
    const res = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), ...mp.headers }, payload: mp.payload });
    expect(res.statusCode).toBe(200);
    expect(res.json().topic).toBe(topic);
    const urlencoded = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), ...FORM }, payload: form({ topic }) });
    expect(urlencoded.json().topic).toBe(topic);
  });

  it("reads the query string for GET", async () => {
    const res = await app.inject({ method: "GET", url: "/api/v1/echo/get?topic=q&count=9", headers: auth() });
    expect(res.json()).toMatchObject({ result: "success", topic: "q", count: 9 });
  });

  it.each(["POST", "PATCH", "PUT", "DELETE"] as const)("%s: body wins over the query string, both are read", async (method) => {
    const url = method === "POST" ? "/api/v1/echo" : `/api/v1/echo/${method.toLowerCase()}`;
    const res = await app.inject({ method, url: `${url}?topic=fromquery&count=1`, headers: { ...auth(), ...FORM }, payload: form({ topic: "frombody" }) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ topic: "frombody", count: 1 });
    expect(res.json()).not.toHaveProperty("ignored_parameters_unsupported");
  });

  it("decodes form escapes as Django does: bytes that are not UTF-8 become U+FFFD, bad escapes stay", async () => {
    const cases: Array<[string, string]> = [
      ["caf%E9", "caf\uFFFD"],
      ["caf%C3%A9+%F0%9F%98%80", "café 😀"],
      ["100%zz+%C3%A9%", "100%zz é%"],
      ["%E9%C3%A9", "\uFFFDé"],
    ];
    for (const [raw, topic] of cases) {
      const res = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), ...FORM }, payload: `topic=${raw}&count=1` });
      expect(res.statusCode, raw).toBe(200);
      expect(res.json(), raw).toEqual({ result: "success", msg: "", topic, count: 1, flags: [] });
    }
  });

  it("reads a form in the charset its Content-Type names; a body that is not UTF-8 is read as Latin-1", async () => {
    const latin1 = { ...auth(), "content-type": "application/x-www-form-urlencoded; charset=ISO-8859-1" };
    for (const [headers, payload] of [
      [latin1, Buffer.from("topic=caf%E9")],
      [latin1, Buffer.from([...Buffer.from("topic=caf"), 0xe9])],
      [{ ...auth(), ...FORM }, Buffer.from([...Buffer.from("topic=caf"), 0xe9])],
      [{ ...auth(), "content-type": "application/x-www-form-urlencoded; charset=utf-8" }, Buffer.from("topic=caf%C3%A9")],
    ] as const) {
      const res = await app.inject({ method: "POST", url: "/api/v1/echo", headers, payload });
      expect(res.statusCode).toBe(200);
      expect(res.json().topic).toBe("café");
    }
  });

  it("decodes query strings the same way", async () => {
    for (const [raw, topic] of [
      ["caf%E9", "caf\uFFFD"],
      ["100%25", "100%"],
      ["%C3%A9%zz", "é%zz"],
    ]) {
      const res = await app.inject({ method: "GET", url: `/api/v1/echo/get?count=2&topic=${raw}`, headers: auth() });
      expect(res.statusCode, raw).toBe(200);
      expect(res.json(), raw).toEqual({ result: "success", msg: "", topic, count: 2, flags: [] });
    }
  });

  it("ignores JSON and text bodies (only form bodies carry parameters), even malformed ones", async () => {
    for (const [type, payload] of [
      ["application/json", '{"topic": "x"'],
      ["text/plain", "topic=x"],
      ["application/octet-stream", "\u0000\u0001"],
    ]) {
      const res = await app.inject({ method: "POST", url: "/api/v1/echo?count=3", headers: { ...auth(), "content-type": type }, payload });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ result: "success", msg: "", count: 3, flags: [] });
    }
  });

  it("lists unknown parameters sorted in ignored_parameters_unsupported, never `client`", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/api/v1/echo?zz=1&client=website",
      headers: { ...auth(), ...FORM },
      payload: form({ topic: "t", beta: "1", alpha: "2", client: "website" }),
    });
    expect(res.json().ignored_parameters_unsupported).toEqual(["alpha", "beta", "zz"]);
  });

  it("answers parameter errors with Zulip's envelope and no ignored list", async () => {
    const res = await app.inject({ method: "POST", url: "/api/v1/echo?unknown=1", headers: { ...auth(), ...FORM }, payload: form({ count: "x" }) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ result: "error", msg: "count is not valid JSON", code: "BAD_REQUEST" });
    const confusing = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), ...FORM }, payload: form({ topic: "a", subject: "b" }) });
    expect(confusing.json()).toEqual({ result: "error", msg: "Can't decide between 'topic' and 'subject' arguments", code: "REQUEST_CONFUSING_VAR" });
  });

  it("decodes path parameters; a non-numeric id is a 404", async () => {
    expect((await app.inject({ method: "GET", url: "/api/v1/items/12", headers: auth() })).json()).toEqual({ result: "success", msg: "", item_id: 12 });
    const bad = await app.inject({ method: "GET", url: "/api/v1/items/abc", headers: auth() });
    expect(bad.statusCode).toBe(404);
    expect(bad.json()).toEqual({ result: "error", msg: "Not Found", code: "BAD_REQUEST" });
    // Long segments (an upload's percent-encoded name) reach the route rather than a 414.
    const long = await app.inject({ method: "GET", url: `/api/v1/items/${"1".repeat(1500)}`, headers: auth() });
    expect(long.statusCode).not.toBe(414);
    expect(long.json().code).toBe("BAD_REQUEST");
  });

  it("refuses calls without the internal token, and user routes without an identity", async () => {
    const noToken = await app.inject({ method: "GET", url: "/api/v1/open" });
    expect(noToken.statusCode).toBe(401);
    expect(noToken.json().code).toBe("UNAUTHORIZED");
    const wrongToken = await app.inject({ method: "GET", url: "/api/v1/open", headers: { [INTERNAL_HEADERS.token]: TOKEN + "x" } });
    expect(wrongToken.statusCode).toBe(401);
    const noIdentity = await app.inject({ method: "GET", url: "/api/v1/echo/get", headers: { [INTERNAL_HEADERS.token]: TOKEN } });
    expect(noIdentity.statusCode).toBe(401);
    expect(noIdentity.headers["www-authenticate"]).toBe('Basic realm="zulip"');
    expect(noIdentity.json()).toEqual({ result: "error", msg: "Not logged in: API authentication or user session required", code: "UNAUTHORIZED" });
    const open = await app.inject({ method: "GET", url: "/api/v1/open", headers: { [INTERNAL_HEADERS.token]: TOKEN } });
    expect(open.json()).toEqual({ result: "success", msg: "", who: null });
  });
});

describe("registerRoute: integration URLs (incomingWebhook)", () => {
  const Hook = route({
    method: "POST",
    path: "/external/test",
    service: "accounts",
    auth: "user",
    incomingWebhook: true,
    params: { topic: p.str() },
    response: success({ raw: z.string().nullable(), topic: z.string().nullable() }),
  });
  const app = createServer({ name: "test", logger: createMemoryLogger("test", "info").log, internalToken: TOKEN, validateResponses: true, bodyLimit: 1024 });
  registerRoute(app, Hook, ({ params, req }) => {
    if (params.topic === "unsupported") throw new ApiError("UNSUPPORTED_WEBHOOK_EVENT_TYPE", "The 'x' event isn't currently supported by the Test webhook; ignoring");
    return { raw: req.rawBody?.toString("utf8") ?? null, topic: params.topic ?? null };
  });
  registerRoute(app, Echo, ({ params, req }) => ({ ...params, topic: req.rawBody === undefined ? params.topic : "kept" }));
  afterAll(() => app.close());
  const hook = (url: string, type: string, payload: string) => app.inject({ method: "POST", url, headers: { ...auth(), "content-type": type }, payload });

  it("hands the handler the body as it came, whatever its type says, and reports no unused parameters", async () => {
    for (const type of ["application/json", "text/plain", "application/x-www-form-urlencoded"]) {
      const res = await hook("/api/v1/external/test?topic=ci&stray=1", type, '{"a": [1, 2]}');
      expect(res.statusCode, type).toBe(200);
      expect(res.json(), type).toEqual({ result: "success", msg: "", raw: '{"a": [1, 2]}', topic: "ci" });
    }
    // Other routes still drain such bodies unread.
    const echo = await hook("/api/v1/echo?count=1", "application/json", '{"a": 1}');
    expect(echo.json()).toEqual({ result: "success", msg: "", count: 1, flags: [] });
  });

  it("refuses a body past the limit with 413", async () => {
    const res = await hook("/api/v1/external/test", "application/json", JSON.stringify({ a: "x".repeat(2000) }));
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe("REQUEST_TOO_LARGE");
  });

  it("answers an error of a 2xx status as a success, with its code", async () => {
    const res = await hook("/api/v1/external/test?topic=unsupported", "application/json", "{}");
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: "success", msg: "The 'x' event isn't currently supported by the Test webhook; ignoring", code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE" });
  });
});

describe("error handler", () => {
  const { app, lines } = build({ bodyLimit: 1024 });
  afterAll(() => app.close());
  const fail = (kind: string) => app.inject({ method: "GET", url: `/api/v1/fails?kind=${kind}`, headers: { [INTERNAL_HEADERS.token]: TOKEN } });

  it("renders an ApiError with its status, code, extra fields and headers", async () => {
    const res = await fail("api");
    expect(res.statusCode).toBe(429);
    expect(res.headers["retry-after"]).toBe("1.5");
    expect(res.json()).toEqual({ result: "error", msg: "API usage exceeded rate limit", code: "RATE_LIMIT_HIT", "retry-after": 1.5 });
    const nf = await fail("notfound");
    expect(nf.statusCode).toBe(404);
    expect(nf.json()).toEqual({ result: "error", msg: "Draft does not exist", code: "BAD_REQUEST" });
  });

  it("gives every 401 the WWW-Authenticate header", async () => {
    for (const kind of ["unauthorized", "plain401"]) {
      const res = await fail(kind);
      expect(res.statusCode).toBe(401);
      expect(res.headers["www-authenticate"]).toBe('Basic realm="zulip"');
      expect(res.json().code).toBe("UNAUTHORIZED");
    }
  });

  it("answers an unexpected error with a bare 500 and logs it, leaking nothing", async () => {
    const res = await fail("crash");
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ result: "error", msg: "Internal server error" });
    expect(res.body).not.toMatch(/secret|\/srv|at /);
    expect(lines.some((l) => l.level === 50 && l.err?.message?.includes("secret internal detail"))).toBe(true);
  });

  it("maps fastify's own client errors to the Zulip envelope with their status", async () => {
    // A bad percent-encoding in the path, or a path segment past the router's limit: fastify's
    // texts would repeat the path back.
    const badUrl = await app.inject({ method: "GET", url: "/api/v1/items/%E0%A4%A", headers: auth() });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.json()).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Malformed URL" });
    expect(badUrl.headers[INTERNAL_HEADERS.requestId]).toEqual(expect.any(String));
    const longSegment = await app.inject({ method: "GET", url: `/api/v1/items/${"1".repeat(3000)}`, headers: auth() });
    expect(longSegment.statusCode).toBe(414);
    expect(longSegment.json()).toEqual({ result: "error", code: "BAD_REQUEST", msg: "URL path segment too long" });
    const length = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), ...FORM, "content-length": "3" }, payload: "topic=abc" });
    expect(length.statusCode).toBe(400);
    expect(length.json()).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Request body size did not match Content-Length" });
    // Over real HTTP: a request node's parser refuses before fastify sees it.
    await app.listen({ port: 0, host: "127.0.0.1" });
    const port = (app.server.address() as AddressInfo).port;
    const raw = await rawHttp(port, "POST /api/v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n");
    expect(raw.status).toBe(400);
    expect(JSON.parse(raw.body)).toEqual({ result: "error", msg: "Malformed HTTP request", code: "BAD_REQUEST" });
    const rawBadUrl = await rawHttp(port, "GET /api/v1/items/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(rawBadUrl.status).toBe(400);
    expect(JSON.parse(rawBadUrl.body)).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Malformed URL" });
  });

  it("answers a body over the limit that is not a form with a 413 over real HTTP, not a reset connection", async () => {
    if (!app.server.listening) await app.listen({ port: 0, host: "127.0.0.1" });
    const port = (app.server.address() as AddressInfo).port;
    // Far past the limit: the rest of the body is still on its way when the answer is sent.
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/echo`, { method: "POST", headers: { ...auth(), "content-type": "application/json" }, body: "x".repeat(4 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ result: "error", msg: "Request body too large", code: "REQUEST_TOO_LARGE" });
  });

  it("answers 413 REQUEST_TOO_LARGE for a body over the limit (form and multipart)", async () => {
    const big = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), ...FORM }, payload: form({ topic: "x".repeat(5000) }) });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toEqual({ result: "error", msg: "Request body too large", code: "REQUEST_TOO_LARGE" });
    const other = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), "content-type": "application/json" }, payload: "x".repeat(5000) });
    expect(other.statusCode).toBe(413);
    const mp = multipart({ topic: "x".repeat(5000) });
    const multi = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), ...mp.headers }, payload: mp.payload });
    expect(multi.statusCode).toBe(413);
    expect(multi.json()).toEqual({ result: "error", msg: "Request body too large", code: "REQUEST_TOO_LARGE" });
  });

  it("answers a malformed multipart body with 400, not 500", async () => {
    const res = await app.inject({ method: "POST", url: "/api/v1/echo", headers: { ...auth(), "content-type": "multipart/form-data" }, payload: "no boundary" });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ result: "error", msg: "Malformed multipart body", code: "BAD_REQUEST" });
  });

  it("answers unknown URLs with a JSON 404", async () => {
    const res = await app.inject({ method: "GET", url: "/api/v1/nowhere" });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ result: "error", msg: "Not Found", code: "BAD_REQUEST" });
  });
});

describe("shutting down", () => {
  it("answers new requests with a 503 envelope and asks the client to drop the connection", async () => {
    const { app } = build();
    markShuttingDown(app);
    const res = await app.inject({ method: "GET", url: "/api/v1/items/1", headers: auth() });
    expect(res.statusCode).toBe(503);
    expect(res.headers.connection).toBe("close");
    expect(res.json()).toEqual({ result: "error", msg: "The server is shutting down; try again", code: "SERVICE_UNAVAILABLE" });
    await app.close();
  });
});

describe("response contracts", () => {
  it("fails a response with an undeclared key when VALIDATE_RESPONSES is on", async () => {
    const { app, lines } = build({ validateResponses: true });
    const res = await app.inject({ method: "GET", url: "/api/v1/sloppy", headers: { [INTERNAL_HEADERS.token]: TOKEN } });
    expect(res.statusCode).toBe(500);
    expect(res.json().msg).toMatch(/GET \/sloppy violates its contract.*leaked/);
    expect(lines.some((l) => l.msg === "response violates its contract")).toBe(true);
    await app.close();
  });

  it("lets it through when validation is off (production)", async () => {
    const { app } = build({ validateResponses: false });
    const res = await app.inject({ method: "GET", url: "/api/v1/sloppy", headers: { [INTERNAL_HEADERS.token]: TOKEN } });
    expect(res.statusCode).toBe(200);
    await app.close();
  });
});

describe("PostgreSQL down -> 503", () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await startProxy(DB_URL);
  });
  afterAll(() => proxy.close());

  async function call(pool: pg.Pool) {
    const { app } = build({}, { pool });
    const res = await app.inject({ method: "GET", url: "/api/v1/db", headers: { [INTERNAL_HEADERS.token]: TOKEN } });
    await app.close();
    return res;
  }

  it("works while the database answers", async () => {
    const pool = new pg.Pool({ connectionString: proxy.url(DB_URL), max: 1 });
    pool.on("error", () => {});
    expect((await call(pool)).json()).toEqual({ result: "success", msg: "", one: 1 });
    await pool.end();
  });

  it("connection refused", async () => {
    const pool = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/postgres", max: 1 });
    const res = await call(pool);
    expect(res.statusCode).toBe(503);
    expect(res.headers["retry-after"]).toBe("5");
    expect(res.json()).toMatchObject({ result: "error", code: "SERVICE_UNAVAILABLE" });
    await pool.end();
  });

  it("connection cut by the network", async () => {
    const pool = new pg.Pool({ connectionString: proxy.url(DB_URL), max: 1 });
    pool.on("error", () => {});
    proxy.block();
    const res = await call(pool);
    proxy.unblock();
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe("SERVICE_UNAVAILABLE");
    await pool.end();
  });

  it("server-side termination (admin shutdown)", async () => {
    const pool = new pg.Pool({ connectionString: DB_URL, max: 1, application_name: "to-terminate" });
    pool.on("error", () => {});
    const client = await pool.connect();
    client.on("error", () => {});
    const { rows } = await client.query("SELECT pg_backend_pid() AS pid");
    const admin = new pg.Client({ connectionString: DB_URL });
    await admin.connect();
    await admin.query("SELECT pg_terminate_backend($1)", [rows[0].pid]);
    await admin.end();
    const { app } = build({}, {});
    registerRoute(app, route({ ...Db, path: "/db-dead" }), async () => {
      const r = await client.query("SELECT 1 AS one");
      return { one: r.rows[0].one };
    });
    const res = await app.inject({ method: "GET", url: "/api/v1/db-dead", headers: { [INTERNAL_HEADERS.token]: TOKEN } });
    expect(res.statusCode).toBe(503);
    client.release(true);
    await pool.end();
    await app.close();
  });
});

describe("/health, /ready, /metrics", () => {
  it("/health answers without touching dependencies", async () => {
    const { app } = build({ readiness: { db: () => Promise.reject(new Error("down")) } });
    const res = await app.inject({ method: "GET", url: "/health" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "ok", service: "test" });
    await app.close();
  });

  it("/ready is 200 when every check passes", async () => {
    const { app } = build({ readiness: { postgres: async () => 1, redis: async () => "PONG" } });
    const res = await app.inject({ method: "GET", url: "/ready" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "ready", service: "test", checks: { postgres: "ok", redis: "ok" } });
    await app.close();
  });

  it("/ready is 503 and names the failing and the hanging check", async () => {
    const { app } = build({
      readinessTimeoutMs: 200,
      readiness: {
        postgres: async () => 1,
        rabbitmq: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:5672")),
        redis: () => new Promise(() => {}),
        throws: () => {
          throw new Error("sync failure");
        },
      },
    });
    const res = await app.inject({ method: "GET", url: "/ready" });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      status: "unavailable",
      service: "test",
      checks: { postgres: "ok", rabbitmq: "connect ECONNREFUSED 127.0.0.1:5672", redis: "timed out after 200 ms", throws: "sync failure" },
      failed: ["rabbitmq", "redis", "throws"],
    });
    await app.close();
  });

  it("/metrics exposes request counts and latency histograms by route and status", async () => {
    const { app } = build();
    await app.inject({ method: "GET", url: "/api/v1/items/1", headers: auth() });
    await app.inject({ method: "GET", url: "/api/v1/items/2", headers: auth() });
    await app.inject({ method: "GET", url: "/api/v1/items/x", headers: auth() });
    await app.inject({ method: "GET", url: "/api/v1/random/path/123" });
    const res = await app.inject({ method: "GET", url: "/metrics" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    const samples = parseMetrics(res.body);
    const items = { service: "test", method: "GET", route: "/api/v1/items/:item_id" };
    expect(sample(samples, "http_requests_total", { ...items, status: "200" })).toBe(2);
    expect(sample(samples, "http_requests_total", { ...items, status: "404" })).toBe(1);
    expect(sample(samples, "http_requests_total", { service: "test", method: "GET", route: "unmatched", status: "404" })).toBe(1);
    expect(sample(samples, "http_request_duration_seconds_count", { ...items, status: "200" })).toBe(2);
    expect(sample(samples, "http_request_duration_seconds_bucket", { ...items, status: "200", le: "+Inf" })).toBe(2);
    expect(sample(samples, "http_request_duration_seconds_sum", { ...items, status: "200" })).toBeGreaterThan(0);
    expect(res.body).toContain("# TYPE http_request_duration_seconds histogram");
    expect(res.body).toContain("process_cpu_user_seconds_total");
    await app.close();
  });

  it("/metrics reads a service's own gauges at each scrape; one that cannot be read shows NaN", async () => {
    let held = 3;
    const { app } = build({
      gauges: {
        test_held: { help: "held things", read: () => held },
        test_broken: { help: "unreadable", read: async () => Promise.reject(new Error("redis down")) },
      },
    });
    const scrape = async () => {
      const res = await app.inject({ method: "GET", url: "/metrics" });
      expect(res.statusCode).toBe(200);
      return parseMetrics(res.body);
    };
    expect(sample(await scrape(), "test_held", { service: "test" })).toBe(3);
    held = 5;
    const samples = await scrape();
    expect(sample(samples, "test_held", { service: "test" })).toBe(5);
    expect(sample(samples, "test_broken", { service: "test" })).toBeNaN();
    await app.close();
  });
});

describe("request ids", () => {
  const peer = createServer({ name: "peer", logger: createMemoryLogger().log, internalToken: TOKEN });
  registerRoute(peer, route({ method: "GET", path: "/seen", service: "messaging", auth: "none", params: {}, response: success({ seen: z.string().nullable() }) }), ({ req }) => ({
    seen: (req.headers["x-request-id"] as string | undefined) ?? null,
  }));
  let peerUrl = "";
  beforeAll(async () => {
    await peer.listen({ port: 0, host: "127.0.0.1" });
    peerUrl = `http://127.0.0.1:${(peer.server.address() as AddressInfo).port}`;
  });
  afterAll(() => peer.close());

  it("echoes an incoming x-request-id and uses it in the logs", async () => {
    const { app, lines } = build();
    const res = await app.inject({ method: "GET", url: "/api/v1/items/1", headers: auth({ "x-request-id": "req-abc-123" }) });
    expect(res.headers["x-request-id"]).toBe("req-abc-123");
    expect(lines.some((l) => l.reqId === "req-abc-123")).toBe(true);
    await app.close();
  });

  it("generates one when the caller sent none, on errors too", async () => {
    const { app } = build();
    const res = await app.inject({ method: "GET", url: "/api/v1/nowhere" });
    expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    await app.close();
  });

  it("InternalClient forwards the id of the request being handled to the next service", async () => {
    const { app } = build({}, { peerUrl });
    const res = await app.inject({ method: "GET", url: "/api/v1/outgoing", headers: { [INTERNAL_HEADERS.token]: TOKEN, "x-request-id": "hop-1" } });
    expect(res.json()).toEqual({ result: "success", msg: "", seen: "hop-1" });
    expect(currentRequestId()).toBeUndefined();
    // An explicit id wins; outside a request none is invented.
    const client = new InternalClient(peerUrl, TOKEN);
    expect((await client.call<{ seen: string }>("GET", "/seen", { requestId: "explicit" })).seen).toBe("explicit");
    expect((await client.call<{ seen: string | null }>("GET", "/seen")).seen).not.toBe("hop-1");
    await app.close();
  });
});

describe("HTTP/2 with prior knowledge on the same port (http2: true)", () => {
  let app: ReturnType<typeof createServer>;
  let port: number;
  beforeAll(async () => {
    app = createServer({ name: "both", logger: createMemoryLogger().log, internalToken: TOKEN, http2: true });
    setStreamRoute(app, (stream, headers) => {
      if (headers[":path"] !== "/stream") return false;
      stream.respond({ ":status": 200, "content-type": "text/plain" });
      stream.end("over h2");
      return true;
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await app.close();
  });

  /** Writes `parts` to a raw connection with pauses between them; resolves with what came back. */
  const rawExchange = (parts: string[]) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1");
      let got = "";
      socket.setEncoding("utf8");
      socket.on("data", (d: string) => {
        got += d;
        if (got.includes("\r\n\r\n")) socket.end();
      });
      socket.on("close", () => resolve(got));
      socket.on("error", reject);
      void (async () => {
        for (const part of parts) {
          socket.write(part);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
    });

  it("answers HTTP/1.1 and HTTP/2 on one port; a stream the route does not take gets 421", async () => {
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    const session = http2.connect(`http://127.0.0.1:${port}`);
    const get = (path: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const stream = session.request({ ":path": path }, { endStream: true });
        let status = 0;
        let text = "";
        stream.on("response", (h) => (status = Number(h[":status"])));
        stream.setEncoding("utf8");
        stream.on("data", (d: string) => (text += d));
        stream.on("end", () => resolve({ status, text }));
        stream.on("error", reject);
      });
    expect(await get("/stream")).toEqual({ status: 200, text: "over h2" });
    expect(await get("/health")).toEqual({ status: 421, text: "" });
    session.close();
  });

  it("tells the protocols apart when the first bytes come one by one (PROPFIND starts like the HTTP/2 preface)", async () => {
    const answer = await rawExchange(["P", "R", "OPFIND /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]);
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    const get = await rawExchange(["G", "ET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]);
    expect(get).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("connections that close or reset before their first byte leave the server serving", async () => {
    await new Promise<void>((resolve) => net.connect(port, "127.0.0.1", function (this: net.Socket) {
      this.end();
      this.on("close", () => resolve());
    }));
    await new Promise<void>((resolve) => net.connect(port, "127.0.0.1", function (this: net.Socket) {
      this.resetAndDestroy();
      resolve();
    }));
    await new Promise((r) => setTimeout(r, 50));
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  });
});
