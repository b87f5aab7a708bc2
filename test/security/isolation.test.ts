import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicRoutes, type ParamSpec, type RouteDef } from "@chat/contracts";
import { basicAuth, runDemo, startStack, type DemoOutput, type DemoUser, type Stack } from "@chat/testkit";
import { createOrgObjects, type OrgObjects } from "./lib/fixtures";
import type { FuzzRequest, WireValue } from "./lib/inputs";
import { sendRaw, type WireResponse } from "./lib/wire";
import { SMALL_POOLS } from "./lib/pools";

/**
 * Tenant isolation: every endpoint that names an object by id, called with another
 * organization's object (and, where objects are private, another user's), answers exactly as it
 * does for an id that exists nowhere: same status, same code, same message (ids aside), nothing
 * leaked, and no timing difference beyond noise.
 */

let stack: Stack;
let demo: DemoOutput;
let org0: OrgObjects;
let org1: OrgObjects;
const figures: string[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_USER_MAX: "1000000", ...SMALL_POOLS } });
  demo = await runDemo(stack);
  [org0, org1] = await Promise.all([createOrgObjects(demo, 0), createOrgObjects(demo, 1)]);
}, 240_000);

afterAll(async () => {
  if (figures.length) process.stdout.write(`\nIsolation checks (${figures.length}):\n${figures.join("\n")}\n\n`);
  await stack?.stop();
}, 60_000);

type Kind = "message" | "channel" | "user" | "group" | "draft" | "scheduled" | "attachment" | "invite" | "queue" | "token" | "bot" | "linkifier" | "field" | "upload";

/** Which kind of object each id-like parameter names. */
const PARAM_KINDS: Record<string, Kind> = {
  message_id: "message",
  messages: "message",
  stream_id: "channel",
  user_id: "user",
  user_group_id: "group",
  draft_id: "draft",
  scheduled_message_id: "scheduled",
  attachment_id: "attachment",
  invite_id: "invite",
  queue_id: "queue",
  token: "token",
  bot_id: "bot",
  filter_id: "linkifier",
  field_id: "field",
  filename: "upload",
};

const MISSING_INT = "1999999999";

/** The wire value naming an object of `kind` in `o` (or one that exists nowhere). */
function idOf(kind: Kind, o: OrgObjects | null, param: string, which: "public" | "private" = "public"): string {
  const ids: Record<Kind, () => string> = {
    message: () => String(which === "private" ? o!.directMessageId : o!.messageId),
    channel: () => String(which === "private" ? o!.privateStreamId : o!.publicStreamId),
    user: () => String(o!.memberId),
    group: () => String(o!.userGroupId),
    draft: () => String(o!.draftId),
    scheduled: () => String(o!.scheduledMessageId),
    attachment: () => String(o!.attachmentId),
    invite: () => String(o!.inviteId),
    queue: () => o!.queueId,
    token: () => o!.pushToken,
    bot: () => String(o!.botId),
    linkifier: () => String(o!.linkifierId),
    field: () => String(o!.profileFieldId),
    upload: () => o!.uploadUrl,
  };
  if (o === null) {
    if (kind === "queue") return "00000000-0000-4000-8000-000000000000";
    if (kind === "token") return "x".repeat(org0.pushToken.length);
    if (kind === "upload") return org0.uploadUrl.replace(/\/[^/]+\/([^/]+)$/, "/zzzzzzzzzzzzzzzzzzzzzzzz/$1");
    return param === "messages" ? `[${MISSING_INT}]` : MISSING_INT;
  }
  const v = ids[kind]();
  return param === "messages" ? `[${v}]` : v;
}

/** Plausible values for the other parameters (the caller's own organization). */
function otherParam(route: RouteDef, name: string, spec: ParamSpec, own: OrgObjects): string | undefined {
  const v: Record<string, string> = {
    type: "stream",
    to: String(own.publicStreamId),
    content: "x",
    topic: "iso",
    op: "add",
    flag: "starred",
    draft: '{"type":"","to":[],"topic":"","content":"y"}',
    visibility_policy: "1",
    scheduled_delivery_timestamp: String(Math.floor(Date.now() / 1000) + 86_400),
    pattern: "#(?P<id>[0-9]+)",
    url_template: "https://example.com/{id}",
    name: "renamed",
    full_name: "Renamed",
  };
  if (name in v) return v[name];
  if (!spec.isRequired) return undefined;
  return { int: "1", bool: "true", json: "[]", string: "x" }[spec.kind];
}

interface Case {
  route: RouteDef;
  param: string;
  kind: Kind;
  /** How the id sits in the parameter (`[id]`, inside a JSON object), when not bare. */
  wrap?: (id: string) => string;
  /** Fixed values for other parameters of this case. */
  with?: Record<string, string>;
  caller: DemoUser;
  own: OrgObjects;
  target: string;
  label: string;
}

function request(c: Case, value: string): FuzzRequest {
  if (c.kind === "upload") return { method: "GET", path: value.replace(/^\/user_uploads/, "/user_uploads"), fields: [], mutation: c.label };
  const fields: Array<[string, WireValue]> = [];
  let path = c.route.path;
  for (const [name, spec] of Object.entries(c.route.params) as Array<[string, ParamSpec]>) {
    const v =
      name === c.param
        ? (c.wrap?.(value) ?? value)
        : (c.with?.[name] ?? (PARAM_KINDS[name] && spec.inPath ? idOf(PARAM_KINDS[name], c.own, name) : otherParam(c.route, name, spec, c.own)));
    if (spec.inPath) path = path.replace(`{${name}}`, encodeURIComponent(v ?? ""));
    else if (v !== undefined) fields.push([name, v]);
  }
  return { method: c.route.method, path, fields, mutation: c.label };
}

/** The answer with every spelling of the probed id blanked, so two ids can be compared. */
function normalized(res: WireResponse, ids: string[]): string {
  let text = res.text;
  // Longest first, whole tokens only: "1" must not eat the start of "1999999999".
  for (const id of [...new Set(ids)].sort((a, b) => b.length - a.length)) {
    const escaped = id.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    text = text.replace(new RegExp(`(?<![0-9A-Za-z])${escaped}(?![0-9A-Za-z])`, "g"), "<ID>");
  }
  return `${res.status} ${text}`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Calls both ids a few times, alternating; returns both answers and median latencies. */
async function compare(c: Case, foreign: string, missing: string) {
  const auth = basicAuth(c.caller.email, c.caller.api_key);
  const times = { foreign: [] as number[], missing: [] as number[] };
  let a: WireResponse | null = null;
  let b: WireResponse | null = null;
  for (let i = 0; i < 3; i++) {
    a = await sendRaw(stack.baseUrl, request(c, foreign), auth);
    b = await sendRaw(stack.baseUrl, request(c, missing), auth);
    times.foreign.push(a.ms);
    times.missing.push(b.ms);
  }
  return { a: a!, b: b!, foreignMs: median(times.foreign), missingMs: median(times.missing) };
}

type IdParam = Pick<Case, "route" | "param" | "kind" | "wrap" | "with">;

const routeOf = (method: string, path: string) => publicRoutes.find((r) => r.method === method && r.path === path)!;

/** Ids inside other parameters (recipients, narrows, JSON objects) that the table cannot name. */
function embeddedIds(): IdParam[] {
  const list = (id: string) => `[${id}]`;
  const cases: IdParam[] = [
    { route: routeOf("POST", "/messages"), param: "to", kind: "channel" },
    { route: routeOf("POST", "/messages"), param: "to", kind: "user", wrap: list, with: { type: "direct" } },
    { route: routeOf("POST", "/scheduled_messages"), param: "to", kind: "channel" },
    { route: routeOf("POST", "/scheduled_messages"), param: "to", kind: "user", wrap: list, with: { type: "direct" } },
    { route: routeOf("GET", "/messages"), param: "narrow", kind: "channel", wrap: (id) => `[{"operator":"channel","operand":${id}}]`, with: { anchor: "newest", num_before: "10" } },
    { route: routeOf("GET", "/messages"), param: "message_ids", kind: "message", wrap: list },
    { route: routeOf("POST", "/drafts"), param: "drafts", kind: "channel", wrap: (id) => `[{"type":"stream","to":[${id}],"topic":"t","content":"c"}]` },
    { route: routeOf("POST", "/user_groups/create"), param: "members", kind: "user", wrap: list, with: { name: "iso group", description: "d" } },
    { route: routeOf("POST", "/user_groups/{user_group_id}/members"), param: "add", kind: "user", wrap: list },
    { route: routeOf("POST", "/user_groups/{user_group_id}/subgroups"), param: "add", kind: "group", wrap: list },
    { route: routeOf("POST", "/invites"), param: "stream_ids", kind: "channel", wrap: list, with: { invitee_emails: "iso-invitee@example.com" } },
    {
      route: routeOf("POST", "/users/me/subscriptions/properties"),
      param: "subscription_data",
      kind: "channel",
      wrap: (id) => `[{"stream_id":${id},"property":"pin_to_top","value":true}]`,
    },
    { route: routeOf("PATCH", "/bots/{bot_id}"), param: "bot_owner_id", kind: "user" },
  ];
  return cases.filter((x) => x.route !== undefined);
}

/** Every (route, id parameter) pair of the contract table, with the kind it names. */
function idParams(): IdParam[] {
  const out: IdParam[] = [...embeddedIds()];
  for (const route of publicRoutes) {
    if (route.auth !== "user") continue;
    for (const name of Object.keys(route.params)) {
      const kind = PARAM_KINDS[name];
      if (!kind) continue;
      // Upload downloads are one case (the whole path), not one per segment.
      if (route.path.startsWith("/user_uploads/") && name !== "filename") continue;
      // A token is only an object id where the route removes it.
      if (kind === "token" && route.method !== "DELETE") continue;
      out.push({ route, param: name, kind });
    }
  }
  return out;
}

/** Bodies are equal (ids aside) and the latency gap is noise. */
function expectSame(c: Case, r: Awaited<ReturnType<typeof compare>>, ids: string[]) {
  const gap = Math.abs(r.foreignMs - r.missingMs);
  figures.push(`- ${c.label}: ${r.a.status} ${r.a.json?.code ?? ""} "${r.a.json?.msg ?? ""}" (median ${r.foreignMs} ms vs ${r.missingMs} ms)`);
  expect(normalized(r.a, ids), c.label).toBe(normalized(r.b, ids));
  // Noise on a busy 2-core machine is tens of milliseconds; a lookup leak would be systematic.
  expect(gap, `${c.label}: timing ${r.foreignMs} vs ${r.missingMs} ms`).toBeLessThan(Math.max(150, r.missingMs));
}

describe("another organization's objects answer like missing ones", () => {
  for (const { route, param, kind, wrap, with: fixed } of idParams()) {
    it(`${route.method} ${route.path} (${param}: org 1's ${kind}, used in org 2)`, async () => {
      const c: Case = {
        route,
        param,
        kind,
        wrap,
        with: fixed,
        // The other organization's owner: roles never hide a leak.
        caller: demo.orgs[1].users.owner,
        own: org1,
        target: "",
        label: `${route.method} ${route.path} ${param}=<org 1 ${kind}>`,
      };
      const foreign = idOf(kind, org0, param);
      const missing = idOf(kind, null, param);
      const r = await compare(c, foreign, missing);
      expectSame(c, r, [foreign, missing, encodeURIComponent(foreign), encodeURIComponent(missing)]);
    });
  }
});

/** Private objects of member (org 1) and who else tries them. */
const PRIVATE: Array<{ kind: Kind; caller: () => DemoUser; which: "private" | "public" }> = [
  // A direct message between member and member2, read by the moderator.
  { kind: "message", caller: () => demo.orgs[0].users.moderator, which: "private" },
  { kind: "draft", caller: () => demo.orgs[0].users.member2, which: "public" },
  { kind: "scheduled", caller: () => demo.orgs[0].users.member2, which: "public" },
  { kind: "attachment", caller: () => demo.orgs[0].users.member2, which: "public" },
  { kind: "upload", caller: () => demo.orgs[0].users.member2, which: "public" },
  { kind: "queue", caller: () => demo.orgs[0].users.member2, which: "public" },
  { kind: "token", caller: () => demo.orgs[0].users.member2, which: "public" },
  // Not here: bots. A bot is a member of the organization that everyone sees in the user list,
  // so "Insufficient permission" for someone else's bot reveals nothing (Zulip answers the same).
  // The private channel, from a user who is not subscribed (the guest).
  { kind: "channel", caller: () => demo.orgs[0].users.guest, which: "private" },
];

describe("another user's private objects answer like missing ones", () => {
  for (const p of PRIVATE) {
    for (const { route, param, wrap, with: fixed } of idParams().filter((x) => x.kind === p.kind)) {
      it(`${route.method} ${route.path} (${param}: member's ${p.kind}, by another user)`, async () => {
        const c: Case = {
          route,
          param,
          kind: p.kind,
          wrap,
          with: fixed,
          caller: p.caller(),
          own: org0,
          target: "",
          label: `${route.method} ${route.path} ${param}=<member's ${p.which === "private" ? "private " : ""}${p.kind}> as ${p.caller().email.split("@")[0]}`,
        };
        const foreign = idOf(p.kind, org0, param, p.which);
        const missing = idOf(p.kind, null, param);
        const r = await compare(c, foreign, missing);
        expectSame(c, r, [foreign, missing, encodeURIComponent(foreign), encodeURIComponent(missing)]);
      });
    }
  }
});
