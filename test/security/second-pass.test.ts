import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, runDemo, startStack, type ApiClient, type DemoOutput, type DemoUser, type Stack } from "@chat/testkit";
import { executableParts } from "./lib/html";
import { SMALL_POOLS } from "./lib/pools";

/**
 * A second pass over the running stack, as an attacker with a member's, a guest's, a bot's or a
 * deactivated account, or none: what the first suites (bad-input, boundaries, content,
 * isolation, roles) leave out. Integration URLs' event filters cannot hang the messaging service;
 * topic links are never script URLs; outgoing webhooks cannot reach this host in any spelling of
 * its address, nor use other schemes; odd Authorization headers and huge or deeply nested
 * parameters get clean answers; a guest cannot reach a public channel it is not in through any
 * side door; a deactivated account's key stops at once, event queue included.
 */

let stack: Stack;
let demo: DemoOutput;
/** Requests the bot servers of this file received (none may arrive). */
const hits: string[] = [];
let botServer: http.Server;
let botPort: number;

beforeAll(async () => {
  botServer = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"content":"reached"}');
  });
  await new Promise<void>((resolve) => botServer.listen(0, "127.0.0.1", resolve));
  botPort = (botServer.address() as AddressInfo).port;
  stack = await startStack({
    // Private addresses are refused as in production (the default), whatever the test hosts do.
    env: { RATE_LIMIT_USER_MAX: "1000000", ...SMALL_POOLS },
    serviceEnv: { messaging: { OUTGOING_WEBHOOK_POLL_SECONDS: "1", OUTGOING_WEBHOOK_PRIVATE_ADDRESSES: "false" } },
  });
  demo = await runDemo(stack);
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => botServer?.close(resolve));
}, 60_000);

const users = () => demo.orgs[0].users as Record<string, DemoUser>;
const as = (name: string): ApiClient => apiClient(stack.baseUrl, users()[name].email, users()[name].api_key);
const publicChannel = () => demo.orgs[0].channels.public;
let n = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

function ok(res: { status: number; body: any }, what: string): any {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

/** Time of one request, and its answer. */
async function timed<T>(p: Promise<T>): Promise<[T, number]> {
  const t0 = Date.now();
  const r = await p;
  return [r, Date.now() - t0];
}

describe("integration URLs' event filters", () => {
  it("a pattern made of wildcards answers at once and leaves the messaging service free (no catastrophic backtracking)", async () => {
    const bot = ok(await as("member").post("/bots", { full_name: "Alerts", short_name: unique("alerts"), bot_type: 2 }), "incoming webhook bot");
    const payload = JSON.stringify({ alerts: [{ status: "firing", labels: { instance: "db1", alertname: "Down" }, annotations: { description: "down" } }] });
    // As a regular expression each of these would take minutes against "firing"; the integration
    // URL is the bot owner's to write (or anyone's who holds it).
    const onlyEvents = JSON.stringify(Array.from({ length: 20 }, (_, i) => "*".repeat(60 + i) + "Z").concat(["f*g"]));
    const url = `${stack.baseUrl}/api/v1/external/alertmanager?api_key=${bot.api_key}&stream=${encodeURIComponent(publicChannel().name)}&only_events=${encodeURIComponent(onlyEvents)}`;
    const [res, ms] = await timed(fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: payload, signal: AbortSignal.timeout(20_000) }));
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await res.json()).result).toBe("success");
    expect(ms).toBeLessThan(5_000);
    // The alert went through the one pattern that matches it.
    const last = ok(await as("member").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: JSON.stringify([{ operator: "channel", operand: publicChannel().stream_id }]), apply_markdown: false }), "history");
    expect(last.messages[0].content).toContain("FIRING");
    // A filter that matches nothing drops the alert, just as fast.
    const none = JSON.stringify(["*?".repeat(40) + "Z"]);
    const [dropped, ms2] = await timed(fetch(url.replace(/only_events=[^&]*/, `only_events=${encodeURIComponent(none)}`), { method: "POST", headers: { "content-type": "application/json" }, body: payload, signal: AbortSignal.timeout(20_000) }));
    expect(dropped.status).toBe(200);
    expect(ms2).toBeLessThan(5_000);
  });
});

describe("topic links", () => {
  it("a linkifier whose URL would run script links nothing, in content or in topic_links (fetch, history, event)", async () => {
    const owner = as("owner");
    const member = as("member");
    const queue = ok(await owner.post("/register", { event_types: JSON.stringify(["message"]) }), "register");
    const cases = [
      { pattern: "#xa(?P<id>[0-9]+)", template: "javascript:alert({id})", text: "#xa42" },
      { pattern: "#xb(?P<id>[0-9]+)", template: "JaVaScRiPt:alert({id})", text: "#xb7" },
      // Reserved expansion keeps the colon: a topic chooses the whole URL.
      { pattern: "!xc(?P<id>\\S+)", template: "{+id}", text: "!xcjavascript:alert(1)" },
      { pattern: "!xd(?P<id>\\S+)", template: "{+id}", text: "!xdvbscript:msgbox(1)" },
    ];
    const ids: number[] = [];
    for (const c of cases) {
      // Zulip validates only the template's syntax; what it links to is checked when it links.
      ok(await owner.post("/realm/filters", { pattern: c.pattern, url_template: c.template }), `linkifier ${c.template}`);
      ids.push(ok(await member.post("/messages", { type: "stream", to: publicChannel().stream_id, topic: `see ${c.text}`, content: `see ${c.text}` }), "send").id);
    }
    // A linkifier with a web URL still links, in both places.
    ok(await owner.post("/realm/filters", { pattern: "!xe(?P<id>[0-9]+)", url_template: "https://tracker.example.com/{id}" }), "web linkifier");
    const web = ok(await member.post("/messages", { type: "stream", to: publicChannel().stream_id, topic: "see !xe5", content: "see !xe5" }), "send").id;

    const scripted = (url: string) => /^\s*(javascript|vbscript|data):/i.test(url);
    const check = (m: any, where: string) => {
      expect(executableParts(m.content), `${where}: ${m.content}`).toEqual([]);
      for (const link of m.topic_links as Array<{ url: string }>) expect(scripted(link.url), `${where}: ${JSON.stringify(m.topic_links)}`).toBe(false);
    };
    for (const id of ids) check(ok(await owner.get(`/messages/${id}`), "fetch").message, `GET /messages/${id}`);
    const page = ok(await owner.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "channel", operand: publicChannel().stream_id }]) }), "history");
    for (const m of page.messages) check(m, `history ${m.id}`);
    const events = ok(await owner.get("/events", { queue_id: queue.queue_id, last_event_id: -1, dont_block: true }), "events").events;
    const messages = events.filter((e: any) => e.type === "message").map((e: any) => e.message);
    expect(messages.length).toBeGreaterThanOrEqual(cases.length);
    for (const m of messages) check(m, `message event ${m.id}`);

    const good = ok(await owner.get(`/messages/${web}`), "fetch").message;
    expect(good.topic_links).toEqual([{ text: "!xe5", url: "https://tracker.example.com/5" }]);
    expect(good.content).toContain('href="https://tracker.example.com/5"');
  });
});

describe("outgoing webhooks cannot reach this host", () => {
  const host = () => `127.0.0.1:${botPort}`;

  it("in any spelling of a loopback address (name, IPv4, IPv4-mapped IPv6, IPv6, with user info): refused as a private address, nothing sent", async () => {
    const member = as("member");
    const urls = [`http://${host()}/a`, `http://localhost:${botPort}/b`, `http://[::ffff:127.0.0.1]:${botPort}/c`, `http://[::1]:${botPort}/d`, `http://x@${host()}/e`, `https://${host()}/f`, `http://[::127.0.0.1]:${botPort}/g`];
    const bots: number[] = [];
    for (const url of urls) {
      const bot = ok(await member.post("/bots", { full_name: unique("Hook "), short_name: unique("hook"), bot_type: 3, payload_url: JSON.stringify(url), interface_type: 1 }), url);
      bots.push(bot.user_id);
      ok(await member.post("/messages", { type: "private", to: JSON.stringify([bot.user_id]), content: "ping" }), "dm the bot");
    }
    // Each bot answers in its conversation with the member that the third party refused.
    const deadline = Date.now() + 20_000;
    let answered: Set<number> = new Set();
    while (Date.now() < deadline && answered.size < bots.length) {
      await new Promise((r) => setTimeout(r, 300));
      const dms = ok(await member.get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow: JSON.stringify([{ operator: "is", operand: "dm" }]), apply_markdown: false }), "dms");
      answered = new Set(dms.messages.filter((m: any) => bots.includes(m.sender_id) && m.content === "Failure! Third party responded with 407").map((m: any) => m.sender_id));
    }
    expect([...answered].sort(), "bots that reported the refusal").toEqual([...bots].sort());
    expect(hits).toEqual([]);
  });

  it("a payload URL of another scheme or an address in a numeric spelling is refused when the bot is made", async () => {
    const member = as("member");
    for (const url of ["file:///etc/passwd", "gopher://127.0.0.1/", "javascript:alert(1)", "data:text/plain,x", "dict://127.0.0.1:11211/", `http://2130706433:${botPort}/`, `http://0x7f000001:${botPort}/`, `http://017700000001:${botPort}/`, `http://127.1:${botPort}/`]) {
      const res = await member.post("/bots", { full_name: unique("Hook "), short_name: unique("hook"), bot_type: 3, payload_url: JSON.stringify(url), interface_type: 1 });
      expect(res.status, url).toBe(400);
      expect(res.body.msg, url).toBe("payload_url is not a URL");
    }
    expect(hits).toEqual([]);
  });
});

describe("authentication edge cases over HTTP", () => {
  const me = (authorization: string) => fetch(`${stack.baseUrl}/api/v1/users/me`, { headers: { authorization } }).then(async (r) => ({ status: r.status, body: await r.json() }));
  const b64 = (s: string) => Buffer.from(s).toString("base64");

  it("accepts the forms Zulip accepts: a lower-case scheme, extra spaces, no base64 padding, the email in another case", async () => {
    const u = users().member;
    for (const header of [`basic ${b64(`${u.email}:${u.api_key}`)}`, `  Basic   ${b64(`${u.email}:${u.api_key}`)}  `, `Basic ${b64(`${u.email}:${u.api_key}`).replace(/=+$/, "")}`, `Basic ${b64(`${u.email.toUpperCase()}:${u.api_key}`)}`]) {
      const res = await me(header);
      expect(res.status, header).toBe(200);
      expect(res.body.user_id).toBe(u.user_id);
    }
  });

  it("refuses with 401 and Zulip's words (never a 5xx) a colon in the email, a key in the wrong place, a very long header, another scheme", async () => {
    const u = users().member;
    const cases: Array<[string, string]> = [
      [`Basic ${b64(`${u.email}:x:${u.api_key}`)}`, "Invalid authorization header for basic auth"],
      [`Basic ${b64(`${u.api_key}:${u.email}`)}`, "Malformed API key"],
      [`Basic ${"QUFB".repeat(3000)}`, "Invalid authorization header for basic auth"],
      [`Bearer ${u.api_key}`, "This endpoint requires HTTP basic authentication."],
      [`Basic ${b64(`${u.email}:${u.api_key}`)} extra`, "Invalid authorization header for basic auth"],
    ];
    for (const [header, msg] of cases) {
      const res = await me(header);
      expect(res.status, header.slice(0, 60)).toBe(401);
      expect(res.body).toMatchObject({ result: "error", code: "UNAUTHORIZED", msg });
    }
  });

  it("a bot's key is refused on the endpoints only people use", async () => {
    const bot = as("bot");
    for (const [method, path, params] of [
      ["POST", "/users/me/presence", { status: "active" }],
      ["POST", "/users/me/status", { status_text: "x" }],
      ["POST", "/users/me/apns_device_token", { token: "abc", appid: "org.example" }],
      ["POST", "/bots", { full_name: "Bot of a bot", short_name: unique("bb") }],
      ["GET", "/user_groups", {}],
    ] as const) {
      const res = await bot.request(method, path, params);
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.msg, `${method} ${path}`).toBe("This endpoint does not accept bot requests.");
    }
  });
});

describe("huge and deeply nested parameters", () => {
  it("lists of 100,000 ids and JSON nested 50,000 deep get quick 4xx answers or are served, never a 5xx", async () => {
    const member = as("member");
    const ids = (count: number) => JSON.stringify(Array.from({ length: count }, (_, i) => i + 1));
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ["POST", "/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: unique("big") }]), principals: ids(100_000) }],
      ["POST", "/messages/flags", { messages: ids(200_000), op: "add", flag: "starred" }],
      ["POST", "/messages", { type: "direct", to: ids(100_000), content: "x" }],
      ["POST", "/users/me/subscriptions", { subscriptions: "[".repeat(50_000) + "]".repeat(50_000) }],
      ["POST", "/users/me/subscriptions", { subscriptions: `[{"name":"${unique("deep")}","x":${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}}]` }],
      ["POST", "/messages/flags/narrow", { anchor: "newest", num_before: 1, num_after: 0, op: "add", flag: "read", narrow: "[".repeat(50_000) + "]".repeat(50_000) }],
      ["POST", "/drafts", { drafts: JSON.stringify(Array.from({ length: 20_000 }, () => ({ type: "stream", to: [999_999], topic: "t", content: "c" }))) }],
    ];
    for (const [method, path, params] of cases) {
      const [res, ms] = await timed(member.request(method, path, params));
      const label = `${method} ${path} ${JSON.stringify(params).slice(0, 60)}`;
      expect(res.status, `${label}: ${JSON.stringify(res.body).slice(0, 200)}`).toBeLessThan(500);
      expect(typeof res.body, label).toBe("object");
      expect(res.body.result === "success" || (res.status >= 400 && typeof res.body.msg === "string" && res.body.msg !== ""), label).toBe(true);
      expect(ms, label).toBeLessThan(10_000);
    }
  });

  it("a query string past the header limit answers 431 in the Zulip envelope", async () => {
    const res = await as("member").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: "[".repeat(100_000) + "]".repeat(100_000) });
    expect(res.status).toBe(431);
    expect(res.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
  });
});

describe("a guest and a public channel it is not in", () => {
  it("reaches neither the channel nor its messages through any route, nor through an all-public event queue", async () => {
    const owner = as("owner");
    const guest = as("guest");
    const name = unique("noguest");
    ok(await owner.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name }]), principals: JSON.stringify([users().owner.user_id, users().member.user_id]) }), "create channel");
    const sid = ok(await owner.get("/get_stream_id", { stream: name }), "id").stream_id;
    const refusedQueue = await guest.post("/register", { event_types: JSON.stringify(["message"]), all_public_streams: true });
    expect(refusedQueue.status).toBe(400);
    expect(refusedQueue.body.msg).toBe("User not authorized for this query");
    const narrowQueue = ok(await guest.post("/register", { event_types: JSON.stringify(["message"]), narrow: JSON.stringify([["channel", name]]) }), "narrow queue");
    const secret = `for members only ${unique("s")}`;
    const mid = ok(await as("member").post("/messages", { type: "stream", to: sid, topic: "secret-topic", content: secret }), "send").id;

    const probes: Array<[string, string, Record<string, unknown>]> = [
      ["GET", `/messages/${mid}`, {}],
      ["GET", `/messages/${mid}/history`, {}],
      ["GET", `/messages/${mid}/read_receipts`, {}],
      ["GET", "/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: JSON.stringify([{ operator: "channel", operand: sid }]) }],
      ["GET", "/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: JSON.stringify([{ operator: "search", operand: "members only" }]) }],
      ["GET", "/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: JSON.stringify([{ operator: "id", operand: mid }]) }],
      ["GET", "/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: JSON.stringify([{ operator: "channels", operand: "public" }]) }],
      ["GET", "/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: JSON.stringify([{ operator: "topic", operand: "secret-topic" }]) }],
      ["GET", "/messages/matches_narrow", { msg_ids: JSON.stringify([mid]), narrow: "[]" }],
      ["POST", `/messages/${mid}/reactions`, { emoji_name: "smile" }],
      ["POST", "/messages/flags", { messages: JSON.stringify([mid]), op: "add", flag: "starred" }],
      ["GET", `/users/me/${sid}/topics`, {}],
      ["GET", `/streams/${sid}/members`, {}],
      ["GET", `/streams/${sid}`, {}],
      ["GET", `/streams/${sid}/email_address`, {}],
      ["POST", "/messages", { type: "stream", to: sid, topic: "x", content: "guest writes" }],
      ["POST", "/users/me/subscriptions", { subscriptions: JSON.stringify([{ name }]) }],
      ["POST", "/typing", { type: "stream", stream_id: sid, topic: "x", op: "start" }],
      ["POST", "/mark_stream_as_read", { stream_id: sid }],
      ["PATCH", `/messages/${mid}`, { topic: "moved" }],
      ["POST", "/user_topics", { stream_id: sid, topic: "secret-topic", visibility_policy: 1 }],
    ];
    for (const [method, path, params] of probes) {
      const res = await guest.request(method, path, params);
      const label = `${method} ${path} ${JSON.stringify(params).slice(0, 80)}`;
      const text = JSON.stringify(res.body);
      expect(res.status, `${label}: ${text.slice(0, 200)}`).toBeLessThan(500);
      expect(text, label).not.toContain(secret);
      expect(text, label).not.toContain("secret-topic");
      if (res.status === 200 && Array.isArray(res.body.messages)) expect(res.body.messages.filter((m: any) => m.stream_id === sid), label).toEqual([]);
      if (res.status === 200 && res.body.messages && !Array.isArray(res.body.messages)) expect(res.body.messages, label).toEqual({});
      // Reads of lists answer what the guest may see (nothing here); every other route refuses.
      if (!(method === "GET" && (path === "/messages" || path === "/messages/matches_narrow"))) expect(res.status, `${label}: ${text.slice(0, 200)}`).toBe(400);
    }
    const events = ok(await guest.get("/events", { queue_id: narrowQueue.queue_id, last_event_id: -1, dont_block: true }), "events").events;
    expect(JSON.stringify(events)).not.toContain(secret);
    // The owner's view is untouched by the guest's attempts.
    const seen = ok(await owner.get(`/messages/${mid}`), "owner fetch").message;
    expect([seen.subject, seen.reactions]).toEqual(["secret-topic", []]);
  });
});

describe("a deactivated account", () => {
  it("loses its key at once, on every route and on an event queue it already had", async () => {
    const m2 = as("member2");
    const queue = ok(await m2.post("/register", { event_types: JSON.stringify(["message"]) }), "register");
    ok(await m2.get("/users/me"), "before");
    ok(await as("owner").delete(`/users/${users().member2.user_id}`), "deactivate");
    // The gateway's caches are dropped through a domain event: allow it a moment, no more.
    const deadline = Date.now() + 3_000;
    let res = await m2.get("/users/me");
    while (res.status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      res = await m2.get("/users/me");
    }
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: "UNAUTHORIZED", msg: "Account is deactivated" });
    for (const [method, path, params] of [
      ["GET", "/events", { queue_id: queue.queue_id, last_event_id: -1, dont_block: true }],
      ["POST", "/messages", { type: "stream", to: publicChannel().stream_id, topic: "t", content: "from beyond" }],
      ["POST", "/register", {}],
      ["POST", "/users/me/api_key/regenerate", {}],
    ] as const) {
      const r = await m2.request(method, path, params);
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.body.msg, `${method} ${path}`).toBe("Account is deactivated");
    }
    // Its password no longer hands out the key either (the demo's password is not known here: a
    // wrong one answers as for anyone).
    const login = await apiClient(stack.baseUrl).post("/fetch_api_key", { username: users().member2.email, password: "not-the-password" });
    expect(login.status).toBe(401);
  });
});
