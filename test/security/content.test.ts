import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, basicAuth, runDemo, startStack, type ApiClient, type DemoOutput, type Stack } from "@chat/testkit";
import { sendMultipart } from "./lib/fixtures";
import { executableParts } from "./lib/html";
import { SMALL_POOLS } from "./lib/pools";

/**
 * What users write never becomes executable HTML for other users (message content, channel
 * descriptions, custom profile fields, scheduled messages, message events); uploads stay inside
 * their storage directory whatever their names, downloads never render as pages; bodies and
 * uploads have size limits that answer 413/400 cleanly and store nothing.
 */

const UPLOAD_LIMIT_MIB = 1;

/** Known XSS vectors, in Markdown and raw HTML, some obfuscated. */
export const XSS_PAYLOADS = [
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  "<svg onload=alert(1)>",
  "<iframe src=javascript:alert(1)></iframe>",
  '<a href="javascript:alert(1)">x</a>',
  "[click](javascript:alert(1))",
  "[click](JaVaScRiPt:alert(1))",
  "[click](javascript&colon;alert(1))",
  "[click](&#106;avascript:alert(1))",
  "[click](  javascript:alert(1))",
  "[click](vbscript:msgbox(1))",
  "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  "![img](javascript:alert(1))",
  '![x](x" onerror="alert(1))',
  "<details open ontoggle=alert(1)>",
  "<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>",
  "<form action=javascript:alert(1)><input type=submit></form>",
  '<div style="background:url(javascript:alert(1))">x</div>',
  "<<script>script>alert(1)<</script>/script>",
  "```\n</code><script>alert(1)</script>\n```",
  "`<img src=x onerror=alert(1)>`",
  "@**<img src=x onerror=alert(1)>**",
  "#**<script>alert(1)</script>>x**",
  "> <script>alert(1)</script>",
  "* <a href=javascript:alert(1)>x</a>",
  "[x](https://example.com \"<script>alert(1)</script>\")",
  "<https://example.com/\"onmouseover=\"alert(1)>",
  "https://example.com/<script>alert(1)</script>",
  "$$\\href{javascript:alert(1)}{x}$$",
  "<base href=javascript:alert(1)//>",
  "<meta http-equiv=refresh content=0;url=javascript:alert(1)>",
  "<object data=javascript:alert(1)>",
  "<embed src=javascript:alert(1)>",
  "<style>*{background:url(javascript:alert(1))}</style>",
  "<a href=\"jav&#x09;ascript:alert(1)\">x</a>",
  "<img src=\"x\" onerror\n=alert(1)>",
  "\u0000<script>alert(1)</script>",
];

let stack: Stack;
let demo: DemoOutput;
let uploadsRoot: string;
let sandbox: string;
let owner: ApiClient;
let member: ApiClient;

beforeAll(async () => {
  // A directory of our own, so that anything escaping the uploads root would land next to it.
  sandbox = mkdtempSync(path.join(os.tmpdir(), "chat-sec-"));
  uploadsRoot = path.join(sandbox, "store", "uploads");
  stack = await startStack({
    serviceEnv: { messaging: { UPLOADS_DIR: uploadsRoot, MAX_FILE_UPLOAD_SIZE_MIB: String(UPLOAD_LIMIT_MIB) } },
    env: { RATE_LIMIT_USER_MAX: "1000000", ...SMALL_POOLS },
  });
  demo = await runDemo(stack);
  const o = demo.orgs[0].users;
  owner = apiClient(stack.baseUrl, o.owner.email, o.owner.api_key);
  member = apiClient(stack.baseUrl, o.member.email, o.member.api_key);
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  if (sandbox) rmSync(sandbox, { recursive: true, force: true });
}, 60_000);

function expectSafe(html: string, payload: string, where: string) {
  expect(executableParts(html), `${where}: payload ${JSON.stringify(payload)} rendered as ${JSON.stringify(html)}`).toEqual([]);
}

describe("the tag scanner", () => {
  it("passes KaTeX's MathML and SVG but not what would run inside them", () => {
    expect(executableParts('<span class="katex"><math><semantics><mi>x</mi><annotation encoding="application/x-tex">x</annotation></semantics></math><svg width="1em"><path d="M0 0"></path></svg></span>')).toEqual([]);
    expect(executableParts('<svg onload="alert(1)"></svg>')).toEqual(["<svg onload=...>"]);
    expect(executableParts('<math><mi xlink:href="javascript:alert(1)">x</mi></math>')).toEqual(['<mi xlink:href="javascript:alert(1)">']);
    expect(executableParts("<math><annotation-xml><div></div></annotation-xml></math>")).toEqual(["<annotation-xml>"]);
    expect(executableParts("<svg><foreignObject><p></p></foreignObject><script></script></svg>")).toEqual(["<foreignobject>", "<script>"]);
  });
});

describe("XSS payloads never come back executable", () => {
  it(`message content (${XSS_PAYLOADS.length} payloads): the send answer, history, single fetch, preview and the message event`, async () => {
    const streamId = demo.orgs[0].channels.public.stream_id;
    const reg = await owner.post("/register", { event_types: ["message"], apply_markdown: true });
    expect(reg.status).toBe(200);
    const ids: number[] = [];
    for (const payload of XSS_PAYLOADS) {
      const sent = await member.post("/messages", { type: "stream", to: streamId, topic: "xss", content: payload });
      if (sent.status !== 200) {
        // Refusing a payload is fine (a null byte, for one); it must be a clean refusal.
        expect(sent.status, JSON.stringify(sent.body)).toBe(400);
        continue;
      }
      ids.push(sent.body.id);
      const one = await owner.get(`/messages/${sent.body.id}`);
      expectSafe(one.body.message.content, payload, "GET /messages/{id}");
      const preview = await member.post("/messages/render", { content: payload });
      if (preview.status === 200) expectSafe(preview.body.rendered, payload, "POST /messages/render");
    }
    expect(ids.length).toBeGreaterThan(XSS_PAYLOADS.length - 3);
    const history = await owner.get("/messages", { anchor: "newest", num_before: 100, narrow: [{ operator: "topic", operand: "xss" }] });
    for (const m of history.body.messages as Array<{ content: string }>) expectSafe(m.content, "(history)", "GET /messages");
    const events = await owner.get("/events", { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true });
    const delivered = (events.body.events as Array<{ type: string; message?: { id: number; content: string } }>).filter((e) => e.type === "message");
    expect(delivered.length).toBe(ids.length);
    for (const e of delivered) expectSafe(e.message!.content, "(event)", "message event");
  });

  it("the topic never carries markup into topic_links", async () => {
    const streamId = demo.orgs[0].channels.public.stream_id;
    for (const topic of ["<script>alert(1)</script>", "javascript:alert(1)", "<img src=x onerror=alert(1)>"]) {
      const sent = await member.post("/messages", { type: "stream", to: streamId, topic, content: "t" });
      expect(sent.status).toBe(200);
      const m = (await owner.get(`/messages/${sent.body.id}`)).body.message;
      for (const link of m.topic_links as Array<{ url: string }>) expect(link.url).not.toMatch(/^\s*javascript:/i);
    }
  });

  it("rendered_description of channels (GET /streams/{id}, subscriptions, the subscription event)", async () => {
    const reg = await owner.post("/register", { event_types: ["subscription"] });
    for (const [i, payload] of XSS_PAYLOADS.entries()) {
      const name = `xss ${i} ${Date.now().toString(36)}`;
      const res = await owner.post("/users/me/subscriptions", { subscriptions: [{ name, description: payload }] });
      if (res.status !== 200) {
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        continue;
      }
      const id = (await owner.get("/get_stream_id", { stream: name })).body.stream_id;
      const stream = await owner.get(`/streams/${id}`);
      expectSafe(stream.body.stream.rendered_description, payload, "GET /streams/{id}");
    }
    const subs = await owner.get("/users/me/subscriptions");
    for (const s of subs.body.subscriptions as Array<{ rendered_description: string }>) expectSafe(s.rendered_description, "(subscriptions)", "GET /users/me/subscriptions");
    const events = await owner.get("/events", { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true });
    const added = (events.body.events as Array<{ op?: string; subscriptions?: Array<{ rendered_description: string }> }>).filter((e) => e.op === "add");
    expect(added.length).toBeGreaterThan(0);
    for (const e of added) for (const s of e.subscriptions ?? []) expectSafe(s.rendered_description, "(event)", "subscription event");
  });

  it("custom profile field values (rendered_value) and scheduled messages (rendered_content)", async () => {
    const field = await owner.post("/realm/profile_fields", { name: `About ${Date.now().toString(36)}`, hint: "", field_type: 2 });
    expect(field.status, JSON.stringify(field.body)).toBe(200);
    const memberId = demo.orgs[0].users.member.user_id;
    for (const payload of XSS_PAYLOADS.slice(0, 20)) {
      const set = await member.patch("/users/me/profile_data", { data: [{ id: field.body.id, value: payload }] });
      if (set.status !== 200) continue;
      const user = await owner.get(`/users/${memberId}`, { include_custom_profile_fields: true });
      const value = user.body.user.profile_data?.[String(field.body.id)];
      if (value?.rendered_value !== undefined) expectSafe(value.rendered_value, payload, "profile rendered_value");
    }
    const streamId = demo.orgs[0].channels.public.stream_id;
    for (const payload of XSS_PAYLOADS.slice(0, 15)) {
      await member.post("/scheduled_messages", {
        type: "stream",
        to: streamId,
        topic: "later",
        content: payload,
        scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86_400,
      });
    }
    const scheduled = await member.get("/scheduled_messages");
    expect(scheduled.body.scheduled_messages.length).toBeGreaterThan(5);
    for (const s of scheduled.body.scheduled_messages as Array<{ rendered_content: string }>) expectSafe(s.rendered_content, "(scheduled)", "scheduled rendered_content");
  });

  it("a linkifier cannot turn text into a javascript: link", async () => {
    const res = await owner.post("/realm/filters", { pattern: "#xss(?P<id>[0-9]+)", url_template: "javascript:alert({id})" });
    const streamId = demo.orgs[0].channels.public.stream_id;
    const sent = await member.post("/messages", { type: "stream", to: streamId, topic: "xss linkifier", content: "see #xss42" });
    const m = (await owner.get(`/messages/${sent.body.id}`)).body.message;
    expectSafe(m.content, "#xss42 with a javascript: linkifier", `linkifier (creation answered ${res.status})`);
    for (const link of m.topic_links as Array<{ url: string }>) expect(link.url).not.toMatch(/^\s*javascript:/i);
  });
});

/** Every file below `dir`, as paths relative to it. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = path.join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else out.push(path.relative(dir, full));
    }
  };
  walk(dir);
  return out;
}

describe("uploads stay in their storage", () => {
  const EVIL_NAMES = [
    "../../../escaped-1.txt",
    "..\\..\\escaped-2.txt",
    "/etc/escaped-3.txt",
    "a/../../escaped-4.txt",
    "%2e%2e%2fescaped-5.txt",
    "....//....//escaped-6.txt",
    "escaped-7.txt\u0000.png",
    "..",
    ".",
    "",
    "x".repeat(400) + ".txt",
    "\u202etxt.exe",
    "CON",
    ".htaccess",
  ];

  it("whatever the file name, the file lands inside the uploads directory and its URL has no traversal", async () => {
    const memberUser = demo.orgs[0].users.member;
    for (const name of EVIL_NAMES) {
      const res = await sendMultipart(stack.baseUrl, memberUser, "/user_uploads", name, `body of ${name}`);
      if (res.status !== 200) {
        expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(400);
        continue;
      }
      const url: string = res.body.url;
      const segments = url.split("/").map(decodeURIComponent);
      expect(segments.slice(0, 2), url).toEqual(["", "user_uploads"]);
      for (const seg of segments.slice(2)) {
        expect(seg, url).not.toMatch(/^\.{1,2}$|[\\/\u0000]/);
        expect(seg.length, url).toBeGreaterThan(0);
      }
      // The uploader can fetch it back through the URL it was given.
      const back = await fetch(`${stack.baseUrl}${url}`, { headers: { authorization: basicAuth(memberUser.email, memberUser.api_key) } });
      expect(back.status, url).toBe(200);
      expect(await back.text()).toBe(`body of ${name}`);
    }
    // Nothing outside the uploads root: only the root itself exists in our sandbox.
    expect(readdirSync(sandbox)).toEqual(["store"]);
    expect(readdirSync(path.join(sandbox, "store"))).toEqual(["uploads"]);
    expect(filesUnder(uploadsRoot).filter((f) => !f.startsWith(".tmp")).length).toBeGreaterThanOrEqual(EVIL_NAMES.length - 3);
  });

  it("download paths with traversal never reach a file outside the uploads directory", async () => {
    const memberUser = demo.orgs[0].users.member;
    const auth = { authorization: basicAuth(memberUser.email, memberUser.api_key) };
    const realm = demo.orgs[0].id;
    const probes = [
      `/user_uploads/${realm}/../../../../etc/passwd`,
      `/user_uploads/${realm}/%2e%2e/%2e%2e/%2e%2e/etc/passwd`,
      `/user_uploads/${realm}/ab/..%2f..%2f..%2fetc/passwd`,
      `/user_uploads/${realm}/ab/x/..%252f..%252fetc%252fpasswd`,
      `/user_uploads/${realm}/ab/x/%2e%2e%5c%2e%2e%5cpackage.json`,
      `/user_uploads/${realm}/..%00/x/passwd`,
      `/api/v1/user_uploads/${realm}/ab/..%2F..%2F..%2F..%2Fpackage.json/x`,
      `/user_avatars/${realm}/..%2f..%2f..%2fpackage.json`,
      `/user_avatars/../../package.json`,
    ];
    for (const p of probes) {
      const res = await fetch(`${stack.baseUrl}${p}`, { headers: auth, redirect: "manual" });
      const text = await res.text();
      expect(res.status, `${p}: ${text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect(res.status, p).toBeLessThan(500);
      expect(text, p).not.toMatch(/root:|"name":\s*"team-chat"/);
    }
  });

  it("an uploaded HTML or SVG file is never served as a page", async () => {
    const memberUser = demo.orgs[0].users.member;
    for (const [name, type, body] of [
      ["page.html", "text/html", "<script>alert(1)</script>"],
      ["image.svg", "image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'],
      ["page.txt", "text/html", "<script>alert(1)</script>"],
    ] as const) {
      const up = await sendMultipart(stack.baseUrl, memberUser, "/user_uploads", name, body, type);
      expect(up.status).toBe(200);
      const res = await fetch(`${stack.baseUrl}${up.body.url}`, { headers: { authorization: basicAuth(memberUser.email, memberUser.api_key) } });
      const served = `${res.headers.get("content-type")} | ${res.headers.get("content-disposition")}`;
      expect(res.headers.get("x-content-type-options"), served).toBe("nosniff");
      const inlineActive = /text\/html|image\/svg|xml/i.test(res.headers.get("content-type") ?? "") && !/^attachment/i.test(res.headers.get("content-disposition") ?? "");
      expect(inlineActive, `${name} served as ${served}`).toBe(false);
    }
  });
});

describe("size limits", () => {
  it("a form body over 5 MiB answers 413 REQUEST_TOO_LARGE, declared or streamed, and stores nothing", async () => {
    const u = demo.orgs[0].users.member;
    const big = `type=stream&to=${demo.orgs[0].channels.public.stream_id}&topic=big&content=${"x".repeat(6 * 1024 * 1024)}`;
    const declared = await fetch(`${stack.baseUrl}/api/v1/messages`, {
      method: "POST",
      headers: { authorization: basicAuth(u.email, u.api_key), "content-type": "application/x-www-form-urlencoded" },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect((await declared.json()).code).toBe("REQUEST_TOO_LARGE");
    // Chunked, without a Content-Length: the owning service counts and refuses.
    const chunks = new ReadableStream<Uint8Array>({
      start(c) {
        const piece = new TextEncoder().encode("x".repeat(256 * 1024));
        c.enqueue(new TextEncoder().encode(big.slice(0, 100)));
        for (let i = 0; i < 24; i++) c.enqueue(piece);
        c.close();
      },
    });
    const streamed = await fetch(`${stack.baseUrl}/api/v1/messages`, {
      method: "POST",
      headers: { authorization: basicAuth(u.email, u.api_key), "content-type": "application/x-www-form-urlencoded" },
      body: chunks,
      duplex: "half",
    } as RequestInit);
    const body = await streamed.text();
    expect(streamed.status, body).toBe(413);
    const history = await owner.get("/messages", { anchor: "newest", num_before: 5, narrow: [{ operator: "topic", operand: "big" }] });
    expect(history.body.messages).toEqual([]);
  });

  it(`an upload over the limit (${UPLOAD_LIMIT_MIB} MiB here) is refused and leaves no file and no attachment`, async () => {
    const u = demo.orgs[0].users.member2;
    const before = filesUnder(uploadsRoot).length;
    const res = await sendMultipart(stack.baseUrl, u, "/user_uploads", "big.bin", Buffer.alloc(UPLOAD_LIMIT_MIB * 1024 * 1024 + 10, 1), "application/octet-stream");
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.code).toBe("BAD_REQUEST");
    expect(res.body.msg).toMatch(/larger than the allowed limit/);
    const mine = await apiClient(stack.baseUrl, u.email, u.api_key).get("/attachments");
    expect(mine.body.attachments).toEqual([]);
    expect(filesUnder(uploadsRoot).filter((f) => !f.startsWith(".tmp")).length).toBe(before);
    // Just under the limit is fine.
    const ok = await sendMultipart(stack.baseUrl, u, "/user_uploads", "ok.bin", Buffer.alloc(UPLOAD_LIMIT_MIB * 1024 * 1024 - 1024, 1), "application/octet-stream");
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it("an avatar over its limit is refused cleanly", async () => {
    const res = await sendMultipart(stack.baseUrl, demo.orgs[0].users.member, "/users/me/avatar", "big.png", Buffer.alloc(11 * 1024 * 1024, 7), "image/png");
    expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body.result).toBe("error");
  });

  it("message content and topic limits: long content is refused or truncated, never stored beyond 10000 characters", async () => {
    const sent = await member.post("/messages", { type: "stream", to: demo.orgs[0].channels.public.stream_id, topic: "t".repeat(61), content: "y".repeat(20_000) });
    if (sent.status === 200) {
      const m = (await owner.get(`/messages/${sent.body.id}`, { apply_markdown: false })).body.message;
      expect(m.content.length).toBeLessThanOrEqual(10_000);
      expect(m.subject.length).toBeLessThanOrEqual(60);
    } else {
      expect(sent.status).toBe(400);
    }
  });
});
