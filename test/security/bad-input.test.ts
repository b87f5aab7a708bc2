import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicRoutes, type ParamSpec, type RouteDef } from "@chat/contracts";
import { basicAuth, runDemo, startStack, type DemoOutput, type Stack } from "@chat/testkit";
import { createOrgObjects, type OrgObjects } from "./lib/fixtures";
import { StoreFingerprint, type Fingerprint } from "./lib/fingerprint";
import { badRequests, coverageExamples, type Baseline, type FuzzRequest } from "./lib/inputs";
import { envelopeProblem, isRefused, sendRaw, type WireResponse } from "./lib/wire";
import { SMALL_POOLS } from "./lib/pools";

/**
 * Property: for every public endpoint of the contract table and every one of its parameters, a
 * hostile value (wrong type, malformed JSON, huge, null bytes, unicode edge cases, invalid UTF-8,
 * SQL and HTML injection, missing, doubled) or a body that is not a form gets a Zulip envelope
 * (never a 5xx, never a non-JSON body), and when the request is refused no stored row changed.
 *
 * Every request is sent by the owner of a fresh demo organization, so that role checks do not
 * hide deeper code. FC_RUNS (default 8) random requests per endpoint, on top of one request per
 * parameter and category that guarantees every parameter is exercised.
 */

const RUNS = Number(process.env.FC_RUNS ?? 8);
const SEED = Number(process.env.FC_SEED ?? Date.now() % 100_000);

let stack: Stack;
let demo: DemoOutput;
let objects: OrgObjects;
let store: StoreFingerprint;
let auth: string;
let ownerEmail: string;
let baseline: Baseline;

interface Tally {
  tried: number;
  refused: number;
  accepted: number;
  statuses: Record<number, number>;
}
const tallies = new Map<string, Tally>();

beforeAll(async () => {
  stack = await startStack({
    env: { RATE_LIMIT_USER_MAX: "1000000", RATE_LIMIT_IP_MAX: "1000000", RATE_LIMIT_AUTH_MAX: "1000000", ...SMALL_POOLS },
  });
  demo = await runDemo(stack);
  objects = await createOrgObjects(demo, 0);
  store = await StoreFingerprint.connect(stack.env.databaseUrl);
  const owner = demo.orgs[0].users.owner;
  ownerEmail = owner.email;
  auth = basicAuth(owner.email, owner.api_key);
  baseline = makeBaseline(objects, demo);
}, 240_000);

afterAll(async () => {
  const rows = [...tallies].map(([name, t]) => `| ${name} | ${t.tried} | ${t.refused} | ${t.accepted} | ${Object.entries(t.statuses).map(([s, n]) => `${s}×${n}`).join(" ")} |`);
  const total = [...tallies.values()].reduce((a, t) => a + t.tried, 0);
  process.stdout.write(
    `\nBad input (seed ${SEED}, FC_RUNS ${RUNS}): ${total} requests over ${tallies.size} endpoints\n\n` +
      `| endpoint | inputs | refused | accepted | statuses |\n| --- | --- | --- | --- | --- |\n${rows.join("\n")}\n\n`,
  );
  await store?.close();
  await stack?.stop();
}, 60_000);

/** Values that make every other parameter plausible, so the mutated one is what the server judges. */
function makeBaseline(o: OrgObjects, d: DemoOutput): Baseline {
  const [, realm, dir, random, filename] = o.uploadUrl.replace(/^\/user_uploads/, "").split("/");
  const ids: Record<string, string> = {
    user_id: String(o.memberId),
    stream_id: String(o.publicStreamId),
    message_id: String(o.messageId),
    draft_id: String(o.draftId),
    scheduled_message_id: String(o.scheduledMessageId),
    user_group_id: String(o.userGroupId),
    attachment_id: String(o.attachmentId),
    invite_id: String(o.inviteId),
    filter_id: String(o.linkifierId),
    field_id: String(o.profileFieldId),
    bot_id: String(o.botId),
    queue_id: o.queueId,
    realm_id_str: realm,
    dir,
    random,
    filename,
  };
  const owner = d.orgs[0].users.owner;
  const values: Record<string, string> = {
    type: "stream",
    to: String(o.publicStreamId),
    content: "fuzz",
    topic: "fuzz",
    op: "add",
    flag: "starred",
    messages: `[${o.messageId}]`,
    anchor: "newest",
    narrow: "[]",
    event_types: '["message"]',
    stream: d.orgs[0].channels.public.name,
    token: o.pushToken,
    appid: "org.example.app",
    username: owner.email,
    password: "not the password",
    email: "fuzz-new@example.com",
    full_name: "Fuzz",
    short_name: "fuzzbot",
    name: "fuzz",
    description: "fuzz",
    members: `[${o.memberId}]`,
    pattern: "#(?P<id>[0-9]+)",
    url_template: "https://example.com/{id}",
    status_text: "fuzz",
    drafts: '[{"type":"","to":[],"topic":"","content":"x"}]',
    draft: '{"type":"","to":[],"topic":"","content":"y"}',
    scheduled_delivery_timestamp: String(Math.floor(Date.now() / 1000) + 86_400),
    invitee_emails: "fuzz-invitee@example.com",
    stream_ids: "[]",
    alert_words: '["fuzz"]',
    data: "[]",
    order: `[${o.profileFieldId}]`,
    ordered_linkifier_ids: `[${o.linkifierId}]`,
    field_type: "1",
    visibility_policy: "1",
    subscription_data: `[{"stream_id":${o.publicStreamId},"property":"pin_to_top","value":true}]`,
  };
  return (route: RouteDef, name: string, spec: ParamSpec) => {
    if (name === "subscriptions") return route.method === "DELETE" ? `["${d.orgs[0].channels.public.name}"]` : '[{"name":"fuzz channel"}]';
    if (name in ids) return ids[name];
    if (name in values) return values[name];
    if (!spec.isRequired) return undefined;
    return { int: "1", bool: "true", json: "[]", string: "x" }[spec.kind];
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The last fingerprint, when nothing was accepted since (else it is retaken). */
let known: Fingerprint | null = null;

/** Sends one request and checks what the issue promises; returns a failure description or null. */
async function probe(route: RouteDef, req: FuzzRequest): Promise<string | null> {
  const t = tallies.get(`${route.method} ${route.path}`)!;
  const before = known ?? (await store.take());
  let res: WireResponse;
  try {
    res = await sendRaw(stack.baseUrl, req, route.auth === "user" ? auth : null);
  } catch (err) {
    return `${req.mutation}: no answer (${(err as Error).message})`;
  }
  t.tried++;
  if (process.env.FUZZ_LOG) process.stderr.write(`${res.status} ${res.ms}ms ${label(req)}\n`);
  t.statuses[res.status] = (t.statuses[res.status] ?? 0) + 1;
  const problem = envelopeProblem(route, res);
  if (problem) return `${req.mutation}: ${problem}`;
  if (!isRefused(res)) {
    t.accepted++;
    known = null;
    // An accepted key regeneration replaced the caller's key: the later routes use the new one.
    if (typeof res.json?.api_key === "string" && req.path === "/users/me/api_key/regenerate") auth = basicAuth(ownerEmail, res.json.api_key);
    return null;
  }
  t.refused++;
  const after = await store.take();
  const changed = StoreFingerprint.diff(before, after);
  known = after;
  if (changed.length === 0) return null;
  // Something changed: background work finishing an earlier accepted request, or this request?
  // Replay it on a settled store to tell.
  await sleep(500);
  const settled = await store.take();
  const again = await sendRaw(stack.baseUrl, req, route.auth === "user" ? auth : null);
  const afterAgain = await store.take();
  known = afterAgain;
  const changedAgain = StoreFingerprint.diff(settled, afterAgain);
  if (isRefused(again) && changedAgain.length > 0) {
    return `${req.mutation}: refused (${res.status} ${res.json?.code}: ${res.json?.msg}) but changed ${changedAgain.join(", ")}`;
  }
  return null;
}

const label = (r: FuzzRequest) => `${r.mutation} ${r.method} ${r.path} ${JSON.stringify(r.fields).slice(0, 300)}${r.body ? ` body ${r.body.contentType}` : ""}`;

describe("the stored-data fingerprint", () => {
  it("covers every service schema and sees the change an accepted request makes", async () => {
    const before = await store.take();
    expect(store.tables.some((t) => t.startsWith("accounts."))).toBe(true);
    expect(store.tables.some((t) => t.startsWith("messaging."))).toBe(true);
    expect(store.tables.some((t) => t.startsWith("scheduler."))).toBe(true);
    const res = await sendRaw(stack.baseUrl, { method: "POST", path: "/drafts", fields: [["drafts", '[{"type":"","to":[],"topic":"","content":"seen"}]']], mutation: "valid" }, auth);
    expect(res.status).toBe(200);
    expect(StoreFingerprint.diff(before, await store.take())).toContain("messaging.drafts");
    known = null;
  });
});

describe("bad input on every public endpoint (fast-check)", () => {
  publicRoutes.forEach((route, i) => {
    it(`${route.method} ${route.path}`, async () => {
      tallies.set(`${route.method} ${route.path}`, { tried: 0, refused: 0, accepted: 0, statuses: {} });
      const examples = coverageExamples(route, baseline, SEED + i).map((r) => [r] as [FuzzRequest]);
      const failures: string[] = [];
      await fc.assert(
        fc.asyncProperty(badRequests(route, baseline), async (req) => {
          const problem = await probe(route, req);
          if (problem) failures.push(`${problem}\n    request: ${label(req)}`);
          return problem === null;
        }),
        { numRuns: RUNS + examples.length, examples, seed: SEED + i, endOnFailure: true },
      ).catch(() => {});
      expect(failures, failures.join("\n")).toEqual([]);
    }, 300_000);
  });
});
