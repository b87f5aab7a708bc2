import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, demoClient, parseMetrics, runDemo, sample, startProxy, startStack, type DemoOutput, type Stack, type TcpProxy } from "@chat/testkit";

/**
 * Operations as a Kubernetes operator sees them: SIGTERM during a long poll answers it with a
 * heartbeat and the process exits cleanly within its grace period; `/ready` fails while a
 * dependency is down and recovers when it returns. PostgreSQL (for accounts), Redis (for
 * events) and RabbitMQ (for messaging) are reached through TCP proxies that the test can block.
 */

const GRACE_SECONDS = 8;

let stack: Stack;
let demo: DemoOutput;
let pgProxy: TcpProxy;
let redisProxy: TcpProxy;
let amqpProxy: TcpProxy;

beforeAll(async () => {
  pgProxy = await startProxy(process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  redisProxy = await startProxy(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  amqpProxy = await startProxy(process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672");
  stack = await startStack({
    // Heartbeats far away, so a heartbeat seen during the test comes from the shutdown.
    env: { SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS), EVENTS_HEARTBEAT_SECONDS: "120", EVENTS_HEARTBEAT_JITTER_SECONDS: "0" },
    serviceEnv: {
      accounts: (v) => ({ DATABASE_URL: pgProxy.url(v.DATABASE_URL) }),
      events: (v) => ({ REDIS_URL: redisProxy.url(v.REDIS_URL) }),
      messaging: (v) => ({ AMQP_URL: amqpProxy.url(v.AMQP_URL) }),
    },
  });
  demo = await runDemo(stack);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await pgProxy?.close();
  await redisProxy?.close();
  await amqpProxy?.close();
});

async function ready(url: string) {
  const res = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
}

/** Polls `/ready` until it answers `status` (the readiness probe's view), or fails after `ms`. */
async function waitReady(url: string, status: number, ms = 20_000) {
  const deadline = Date.now() + ms;
  let last: Awaited<ReturnType<typeof ready>> | null = null;
  while (Date.now() < deadline) {
    last = await ready(url).catch(() => null);
    if (last?.status === status) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url}/ready never answered ${status}; last: ${JSON.stringify(last)}`);
}

describe("SIGTERM during a long poll", () => {
  it("answers the held poll with a heartbeat, exits 0 within the grace period, and the queue survives", async () => {
    const member = demoClient(demo, demo.orgs[0].users.member);
    const reg = await member.post("/register", { event_types: ["message"] });
    expect(reg.status).toBe(200);
    const { queue_id, last_event_id } = reg.body;
    const poll = member.get("/events", { queue_id, last_event_id });
    // Let the poll reach the events service and block there.
    await new Promise((r) => setTimeout(r, 1000));
    const t0 = Date.now();
    const exited = stack.kill("events", "SIGTERM");
    const res = await poll;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: "success", events: [{ type: "heartbeat" }] });
    const exit = await exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(GRACE_SECONDS * 1000);

    // Queues live in Redis: after a restart the client goes on with the same queue.
    await stack.start("events");
    const heartbeatId = res.body.events[0].id;
    const again = await member.get("/events", { queue_id, last_event_id: heartbeatId, dont_block: true });
    expect(again.status).toBe(200);
    expect(again.body.result).toBe("success");
  }, 60_000);
});

describe("/ready follows the dependencies", () => {
  it("accounts: not ready while PostgreSQL is unreachable, ready again when it returns", async () => {
    expect((await ready(stack.urls.accounts)).status).toBe(200);
    pgProxy.block();
    try {
      const down = await waitReady(stack.urls.accounts, 503);
      expect(down.body.checks.postgres).not.toBe("ok");
      // A request that needs the database gets a clear 503, not a hang or a 500.
      const res = await demoClient(demo, demo.orgs[0].users.member).get("/users");
      expect(res.status).toBe(503);
    } finally {
      pgProxy.unblock();
    }
    await waitReady(stack.urls.accounts, 200);
    expect((await demoClient(demo, demo.orgs[0].users.member).get("/users")).status).toBe(200);
  }, 60_000);

  it("events: not ready while Redis is unreachable, ready again when it returns", async () => {
    await waitReady(stack.urls.events, 200);
    redisProxy.block();
    try {
      const down = await waitReady(stack.urls.events, 503);
      expect(down.body.checks.redis).not.toBe("ok");
    } finally {
      redisProxy.unblock();
    }
    await waitReady(stack.urls.events, 200);
    const reg = await demoClient(demo, demo.orgs[0].users.owner).post("/register", { event_types: ["message"] });
    expect(reg.status).toBe(200);
  }, 60_000);

  it("gateway: not ready while accounts is down, ready again when it is back", async () => {
    await stack.kill("accounts");
    try {
      const down = await waitReady(stack.baseUrl, 503);
      expect(down.body.checks.accounts).not.toBe("ok");
      // Clients get a clear answer meanwhile.
      const res = await apiClient(stack.baseUrl).get("/server_settings");
      expect(res.status).toBe(503);
    } finally {
      await stack.start("accounts");
    }
    await waitReady(stack.baseUrl, 200);
    expect((await demoClient(demo, demo.orgs[0].users.member).get("/users/me")).status).toBe(200);
  }, 60_000);
});

describe("/metrics follows the event pipeline", () => {
  /** One sample of a service's /metrics, with exactly these labels besides `service`. */
  async function metric(service: keyof Stack["urls"], name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
    const text = await (await fetch(`${stack.urls[service]}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    return sample(parseMetrics(text), name, { service, ...labels });
  }

  it("a sent message shows as published by messaging's relay and handled by the events service's consumer; nothing waits", async () => {
    const org = demo.orgs[0];
    const published = (await metric("messaging", "outbox_published_events_total", { schema: "messaging" })) ?? 0;
    const handled = (await metric("events", "amqp_consumed_messages_total", { queue: "events.client", outcome: "handled" })) ?? 0;
    const sent = await demoClient(demo, org.users.member).post("/messages", { type: "stream", to: org.channels.public.name, topic: "metrics", content: "counted" });
    expect(sent.status).toBe(200);
    await expect.poll(() => metric("messaging", "outbox_published_events_total", { schema: "messaging" }), { timeout: 10_000 }).toBeGreaterThan(published);
    await expect.poll(() => metric("events", "amqp_consumed_messages_total", { queue: "events.client", outcome: "handled" }), { timeout: 10_000 }).toBeGreaterThan(handled);
    await expect.poll(() => metric("messaging", "outbox_pending_events", { schema: "messaging" }), { timeout: 10_000 }).toBe(0);
    expect(await metric("messaging", "outbox_oldest_pending_seconds", { schema: "messaging" })).toBe(0);
    for (const service of ["accounts", "messaging", "events", "gateway", "scheduler"] as const) {
      expect(await metric(service, "amqp_connected"), service).toBe(1);
    }
    expect(await metric("events", "amqp_queue_dead_letters", { queue: "events.client" })).toBe(0);
  }, 30_000);

  it("messages sent while messaging cannot reach RabbitMQ wait in its outbox and then travel as one broker message, each event delivered in order", async () => {
    const org = demo.orgs[0];
    const member = demoClient(demo, org.users.member);
    const send = (content: string) => member.post("/messages", { type: "stream", to: org.channels.public.name, topic: "backlog", content });
    // The first message of a topic also makes its sender follow it (events of their own).
    expect((await send("first")).status).toBe(200);
    await expect.poll(() => metric("messaging", "outbox_pending_events", { schema: "messaging" }), { timeout: 10_000 }).toBe(0);
    const reg = await member.post("/register", { event_types: ["message"] });
    expect(reg.status).toBe(200);
    const events = (await metric("messaging", "outbox_published_events_total", { schema: "messaging" })) ?? 0;
    const messages = (await metric("messaging", "amqp_published_messages_total")) ?? 0;
    amqpProxy.block();
    try {
      await expect.poll(() => metric("messaging", "amqp_connected"), { timeout: 10_000 }).toBe(0);
      for (const n of [1, 2, 3]) expect((await send(`waiting ${n}`)).status).toBe(200);
      expect(await metric("messaging", "outbox_pending_events", { schema: "messaging" })).toBe(3);
    } finally {
      amqpProxy.unblock();
    }
    await expect.poll(() => metric("messaging", "outbox_pending_events", { schema: "messaging" }), { timeout: 15_000 }).toBe(0);
    expect(await metric("messaging", "outbox_published_events_total", { schema: "messaging" })).toBe(events + 3);
    expect(await metric("messaging", "amqp_published_messages_total")).toBe(messages + 1);
    const got: string[] = [];
    let last = reg.body.last_event_id as number;
    while (got.length < 3) {
      const polled = await member.get("/events", { queue_id: reg.body.queue_id, last_event_id: last });
      expect(polled.status).toBe(200);
      for (const e of polled.body.events as Array<{ id: number; type: string; message?: { content: string } }>) {
        last = e.id;
        if (e.type === "message") got.push(e.message!.content);
      }
    }
    expect(got).toEqual(["waiting 1", "waiting 2", "waiting 3"]); // register without apply_markdown: the source
  }, 60_000);
});
