import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoClient, runDemo, startStack, type ApiClient, type DemoOutput, type DemoUser, type Stack } from "@chat/testkit";
import { contractEventErrors, openapiAvailable, zulipEventErrors } from "../../events/test/openapi";

/**
 * Saved snippets through the whole stack (gateway, messaging, events), as a Zulip client calls
 * them: the saved_snippets events reach every queue of their owner and nobody else's, in the
 * organization or outside it; register serves the stored snippets.
 */

let stack: Stack;
let demo: DemoOutput;
let org: DemoOutput["orgs"][0];
let org2: DemoOutput["orgs"][1];
const clients = new Map<DemoUser, ApiClient>();
const as = (u: DemoUser) => clients.get(u) ?? clients.set(u, demoClient(demo, u)).get(u)!;

beforeAll(async () => {
  stack = await startStack({ serviceEnv: { gateway: { RATE_LIMITING_ENABLED: "false" } } });
  demo = await runDemo(stack);
  org = demo.orgs[0];
  org2 = demo.orgs[1];
}, 180_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ok(res: { status: number; body: any }) {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.result).toBe("success");
  return res.body;
}

async function register(u: DemoUser, params: Record<string, unknown> = {}) {
  return ok(await as(u).post("/register", params)) as Record<string, any>;
}

/** Events of a queue after its last read (heartbeats skipped), each checked against our contract and Zulip's schema. */
async function drain(u: DemoUser, queue: Record<string, any>) {
  const res = ok(await as(u).get("/events", { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true }));
  const events = (res.events as any[]).filter((e) => e.type !== "heartbeat");
  for (const e of events) {
    expect(contractEventErrors(e), `contract: ${JSON.stringify(e)}`).toEqual([]);
    if (openapiAvailable) expect(zulipEventErrors(e), `Zulip schema: ${JSON.stringify(e)}`).toEqual([]);
  }
  if (res.events.length) queue.last_event_id = res.events[res.events.length - 1].id;
  return events;
}

async function waitForEvents(u: DemoUser, queue: Record<string, any>, count: number) {
  const got: any[] = [];
  const deadline = Date.now() + 15_000;
  while (got.length < count && Date.now() < deadline) {
    got.push(...(await drain(u, queue)));
    if (got.length < count) await sleep(100);
  }
  return got;
}

describe("saved snippets through the gateway", () => {
  it("events reach each of the owner's queues and no one else's; register and GET serve the snippets", async () => {
    const { member, member2, admin } = org.users;
    const ONLY = { event_types: ["saved_snippets"], fetch_event_types: ["saved_snippets"] };
    const first = await register(member, ONLY);
    const second = await register(member, ONLY);
    const colleague = await register(member2, ONLY);
    const administrator = await register(admin, ONLY);
    const outsider = await register(org2.users.member, ONLY);
    expect(first.saved_snippets).toEqual([]);

    const { saved_snippet_id: id } = ok(await as(member).post("/saved_snippets", { title: " Greeting ", content: "Welcome to the organization." }));
    const snippet = { id, title: "Greeting", content: "Welcome to the organization.", date_created: expect.any(Number) };
    for (const q of [first, second]) {
      const [event, ...rest] = await waitForEvents(member, q, 1);
      expect(rest).toEqual([]);
      expect(event).toEqual({ id: expect.any(Number), type: "saved_snippets", op: "add", saved_snippet: snippet });
    }
    const listed = ok(await as(member).get("/saved_snippets")).saved_snippets;
    expect(listed).toEqual([snippet]);
    expect(Math.abs(listed[0].date_created - Date.now() / 1000)).toBeLessThan(60);
    expect((await register(member, { fetch_event_types: ["saved_snippets"] })).saved_snippets).toEqual(listed);
    expect(ok(await as(member2).get("/saved_snippets")).saved_snippets).toEqual([]);

    // Someone else cannot delete it, and is told it does not exist.
    const refused = await as(member2).delete(`/saved_snippets/${id}`);
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Saved snippet does not exist." });
    const empty = await as(member).post("/saved_snippets", { title: "  ", content: "x" });
    expect(empty.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Title cannot be empty." });

    ok(await as(member).delete(`/saved_snippets/${id}`));
    for (const q of [first, second]) {
      const [event] = await waitForEvents(member, q, 1);
      expect(event).toEqual({ id: expect.any(Number), type: "saved_snippets", op: "remove", saved_snippet_id: id });
    }
    await sleep(500);
    expect(await drain(member2, colleague)).toEqual([]);
    expect(await drain(admin, administrator)).toEqual([]);
    expect(await drain(org2.users.member, outsider)).toEqual([]);
    expect(ok(await as(member).get("/saved_snippets")).saved_snippets).toEqual([]);
  });
});
