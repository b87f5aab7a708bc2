import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoClient, runDemo, startStack, type ApiClient, type DemoOutput, type DemoUser, type Stack } from "@chat/testkit";
import { contractEventErrors, openapiAvailable, zulipEventErrors } from "../../events/test/openapi";

/**
 * Code playgrounds and the test push notification through the whole stack (gateway, accounts,
 * events), as a Zulip client calls them: the realm_playgrounds event reaches every queue of the
 * organization and none of another's; register serves the stored list.
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

describe("code playgrounds through the gateway", () => {
  it("reach every queue of the organization and no other organization's; register serves them", async () => {
    const { admin, member, guest } = org.users;
    const ONLY = { event_types: ["realm_playgrounds"], fetch_event_types: ["realm_playgrounds"] };
    const memberQ = await register(member, ONLY);
    const guestQ = await register(guest, ONLY);
    const outsiderQ = await register(org2.users.member, ONLY);
    expect(memberQ.realm_playgrounds).toEqual([]);

    const playground = { name: "Rust playground", pygments_language: "Rust", url_template: "https://play.rust-lang.org/?code={code}" };
    const { id } = ok(await as(admin).post("/realm/playgrounds", playground));
    const expected = { type: "realm_playgrounds", realm_playgrounds: [{ id, ...playground }] };
    for (const [u, q] of [[member, memberQ], [guest, guestQ]] as const) {
      const [event, ...rest] = await waitForEvents(u, q, 1);
      expect(rest).toEqual([]);
      expect(event).toEqual({ id: expect.any(Number), ...expected });
    }
    await sleep(500);
    expect(await drain(org2.users.member, outsiderQ)).toEqual([]);

    expect((await register(member, { fetch_event_types: ["realm_playgrounds"] })).realm_playgrounds).toEqual(expected.realm_playgrounds);
    const all = await register(org2.users.member);
    expect(all.realm_playgrounds).toEqual([]);

    // Errors as Zulip words them, through the gateway.
    const dup = await as(admin).post("/realm/playgrounds", playground);
    expect(dup.status).toBe(400);
    expect(dup.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Realm playground with this Realm, Pygments language and Name already exists." });
    const refused = await as(member).post("/realm/playgrounds", { ...playground, name: "Mine" });
    expect(refused.body).toMatchObject({ result: "error", code: "UNAUTHORIZED_PRINCIPAL", msg: "Must be an organization administrator" });
    const foreign = await as(org2.users.owner).delete(`/realm/playgrounds/${id}`);
    expect(foreign.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Invalid playground" });

    ok(await as(admin).delete(`/realm/playgrounds/${id}`));
    const [removed] = await waitForEvents(member, memberQ, 1);
    expect(removed).toEqual({ id: expect.any(Number), type: "realm_playgrounds", realm_playgrounds: [] });
    await sleep(300);
    expect(await drain(org2.users.member, outsiderQ)).toEqual([]);
  });
});

describe("POST /mobile_push/test_notification through the gateway", () => {
  it("is routed (no longer 404): an unknown token is not recognized; otherwise push is not configured here", async () => {
    const { member } = org.users;
    const unknown = await as(member).post("/mobile_push/test_notification", { token: "never-registered" });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ result: "error", code: "INVALID_PUSH_DEVICE_TOKEN", msg: "Device not recognized" });
    ok(await as(member).post("/users/me/android_gcm_reg_id", { token: "e2e-device" }));
    for (const params of [{ token: "e2e-device" }, {}]) {
      const res = await as(member).post("/mobile_push/test_notification", params);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", code: "PUSH_SERVICE_NOT_CONFIGURED", msg: "Server is not configured to use push notification service." });
    }
  });
});
