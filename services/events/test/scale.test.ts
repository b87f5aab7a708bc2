import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DomainEnvelope } from "@chat/contracts";
import { AmqpClient, createLogger } from "@chat/platform";
import { startProxy, type TcpProxy } from "@chat/testkit";
import { clientEventsConsumer } from "../src/consumers/client-events";
import { collect, eventsEnv, notice, poll, queueFor, user, type EventsEnv, type Instance } from "./support";

/** Several events instances on one Redis: polls spread over them, instances leaving, broker outages. */

let ev: EventsEnv;
let a: Instance;
let b: Instance;

beforeAll(async () => {
  ev = await eventsEnv();
  a = await ev.start();
  b = await ev.start();
});
afterAll(async () => {
  await ev.teardown();
});

// The two largest tests register and poll 2,100-2,500 queues over HTTP: a few seconds alone,
// several times that while the rest of the suite runs on the same two cores.
const BIG_TEST_TIMEOUT_MS = 120_000;

/**
 * `fn` over `items`, at most 250 at a time: thousands of requests opened at once overflow the
 * server's accept backlog on a busy machine, and the kernel resets the connections it drops.
 */
async function inParts<T, R>(items: T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += 250) out.push(...(await Promise.all(items.slice(i, i + 250).map(fn))));
  return out;
}

const send = (users: number[], event: Record<string, unknown>) => ev.publish("test.notice.sent", 1, notice(event, users));

describe("two instances", () => {
  it("serve one queue alternately, every event once and in order", async () => {
    const who = user();
    const q = await queueFor(a, who);
    const seen: number[] = [];
    let last = -1;
    for (let n = 0; n < 10; n++) {
      await send([who.userId], { type: "custom", n });
      const inst = n % 2 ? b : a;
      const res = await poll(inst, who, q, last);
      expect(res.status).toBe(200);
      for (const e of res.body.events) {
        expect(e.id).toBeGreaterThan(last);
        last = e.id;
        if (e.type === "custom") seen.push(e.n);
      }
    }
    // Anything still in flight arrives on the next poll.
    while (seen.length < 10) {
      const res = await poll(b, who, q, last);
      for (const e of res.body.events) {
        last = e.id;
        if (e.type === "custom") seen.push(e.n);
      }
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("a poll waiting on one instance is released by a poll on the other", async () => {
    const who = user();
    const q = await queueFor(a, who);
    const first = poll(a, who, q, -1);
    await new Promise((r) => setTimeout(r, 150));
    const second = poll(b, who, q, -1);
    expect((await first).body.events).toEqual([]);
    await send([who.userId], { type: "custom", n: 1 });
    expect((await second).body.events).toEqual([{ id: 0, type: "custom", n: 1 }]);
  });

  it("an instance shutting down answers its held polls with a heartbeat; the next poll continues elsewhere", async () => {
    const leaving = await ev.start({ env: { EVENTS_HEARTBEAT_SECONDS: "30" } });
    const who = user();
    const q = await queueFor(leaving, who);
    const held = poll(leaving, who, q, -1);
    await new Promise((r) => setTimeout(r, 150));
    const started = Date.now();
    await leaving.close();
    const res = await held;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(res.body).toEqual({ result: "success", msg: "", events: [{ id: 0, type: "heartbeat" }], queue_id: q });

    const next = poll(b, who, q, 0);
    await new Promise((r) => setTimeout(r, 100));
    await send([who.userId], { type: "custom", n: 2 });
    expect((await next).body.events).toEqual([{ id: 1, type: "custom", n: 2 }]);
  });
});

describe("fan-out", () => {
  it("one notice reaches many queues, each exactly once", async () => {
    const users = Array.from({ length: 60 }, () => user());
    const queues: Array<[ReturnType<typeof user>, string]> = [];
    for (const u of users) {
      const ids = await Promise.all([0, 1, 2, 3, 4].map((k) => queueFor(k % 2 ? a : b, u)));
      for (const id of ids) queues.push([u, id]);
    }
    const written = await a.app.events.deliverer.doDeliverNotice(randomUUID(), 1, {
      event: { type: "custom", wide: true },
      users: users.map((u) => u.userId),
    });
    expect(written).toBe(300);
    const bodies = await inParts(queues, ([u, q]) => poll(b, u, q, undefined, { dont_block: true }).then((r) => r.body.events));
    for (const events of bodies) expect(events).toEqual([{ id: 0, type: "custom", wide: true }]);
  });

  it("a fan-out larger than one script call (2,500 queues, in parts) reaches each queue exactly once, also when redelivered", async () => {
    const users = Array.from({ length: 500 }, () => user());
    const queues: Array<[ReturnType<typeof user>, string]> = [];
    for (let i = 0; i < users.length; i += 50) {
      const batch = await Promise.all(users.slice(i, i + 50).flatMap((u) => [0, 1, 2, 3, 4].map(async (k) => [u, await queueFor(k % 2 ? a : b, u)] as [ReturnType<typeof user>, string])));
      queues.push(...batch);
    }
    const envelopeId = randomUUID();
    const deliver = () => a.app.events.deliverer.doDeliverNotice(envelopeId, 1, { event: { type: "custom", big: true }, users: users.map((u) => u.userId) });
    expect(await deliver()).toBe(2500);
    // The broker redelivers (the first consumer died before its ack): nothing more is written.
    expect(await deliver()).toBe(0);
    const bodies = await inParts(queues, ([u, q]) => poll(b, u, q, undefined, { dont_block: true }).then((r) => r.body.events));
    for (const events of bodies) expect(events).toEqual([{ id: 0, type: "custom", big: true }]);
  }, BIG_TEST_TIMEOUT_MS);
});

describe("envelopes delivered as one batch", () => {
  it("a large fan-out amid small ones and a deactivation among them: each queue gets its events once and in order, also when the batch comes again", async () => {
    const gone = user();
    const users = Array.from({ length: 420 }, () => user());
    const queues: Array<[ReturnType<typeof user>, string]> = [];
    for (let i = 0; i < users.length; i += 60) {
      const made = await Promise.all(users.slice(i, i + 60).flatMap((u) => [0, 1, 2, 3, 4].map(async (k) => [u, await queueFor(k % 2 ? a : b, u)] as [ReturnType<typeof user>, string])));
      queues.push(...made);
    }
    const goneQueue = await queueFor(a, gone);
    const [first] = users;
    const envelope = (type: string, payload: Record<string, unknown>): DomainEnvelope => ({
      id: randomUUID(), type, version: 1, occurred_at: new Date().toISOString(), realm_id: 1, payload,
    });
    const batch = [
      envelope("test.notice.sent", notice({ type: "custom", n: 1 }, [gone.userId, first.userId])),
      // 2,101 queues: more than one script call takes, so it goes on its own, in parts.
      envelope("test.notice.sent", notice({ type: "custom", n: 2 }, [gone.userId, ...users.map((u) => u.userId)])),
      envelope("accounts.user.deactivated", {
        user: { user_id: gone.userId, realm_id: 1 },
        ...notice({ type: "realm_user", op: "update", person: { user_id: gone.userId, is_active: false } }, [first.userId]),
      }),
      envelope("test.notice.sent", notice({ type: "custom", n: 4 }, [gone.userId, first.userId])),
      // 1,200 queues each: one script call apiece, but not both in one round trip.
      envelope("test.notice.sent", notice({ type: "custom", n: 5 }, users.slice(0, 240).map((u) => u.userId))),
      envelope("test.notice.sent", notice({ type: "custom", n: 6 }, users.slice(0, 240).map((u) => u.userId))),
      envelope("test.other.happened", { nothing: "for clients" }),
    ];
    const handle = clientEventsConsumer(a.app.events).batchHandler!;
    await handle(batch);
    // The broker delivers the batch again (the consumer died before its ack): nothing twice.
    await handle(batch);

    const person = { type: "realm_user", op: "update", person: { user_id: gone.userId, is_active: false } };
    const bodies = await inParts(queues, ([u, q]) => poll(b, u, q, undefined, { dont_block: true }).then((r) => [u, r.body.events] as const));
    const early = new Set(users.slice(0, 240));
    for (const [u, events] of bodies) {
      if (u === first) {
        expect(events).toEqual([
          { id: 0, type: "custom", n: 1 }, { id: 1, type: "custom", n: 2 }, { id: 2, ...person }, { id: 3, type: "custom", n: 4 },
          { id: 4, type: "custom", n: 5 }, { id: 5, type: "custom", n: 6 },
        ]);
      } else if (early.has(u)) {
        expect(events).toEqual([{ id: 0, type: "custom", n: 2 }, { id: 1, type: "custom", n: 5 }, { id: 2, type: "custom", n: 6 }]);
      } else {
        expect(events).toEqual([{ id: 0, type: "custom", n: 2 }]);
      }
    }
    // The deactivated user's queue got what came before the deactivation, then went.
    expect((await poll(a, gone, goneQueue, undefined, { dont_block: true })).body.code).toBe("BAD_EVENT_QUEUE_ID");
  }, BIG_TEST_TIMEOUT_MS);
});

describe("a batch after Redis forgot its scripts", () => {
  it("loads them again and delivers every envelope once", async () => {
    const who = user();
    const q = await queueFor(a, who);
    const envelope = (n: number): DomainEnvelope => ({
      id: randomUUID(), type: "test.notice.sent", version: 1, occurred_at: new Date().toISOString(), realm_id: 1,
      payload: notice({ type: "custom", n }, [who.userId]),
    });
    // What a Redis restart does to loaded scripts (every caller falls back to loading them).
    await ev.redis.script("FLUSH");
    await clientEventsConsumer(a.app.events).batchHandler!([envelope(1), envelope(2)]);
    expect((await poll(b, who, q, undefined, { dont_block: true })).body.events).toEqual([{ id: 0, type: "custom", n: 1 }, { id: 1, type: "custom", n: 2 }]);
  });
});

describe("broker outages", () => {
  let proxy: TcpProxy;
  let publisher: AmqpClient;
  let c: Instance;
  let d: Instance;

  beforeAll(async () => {
    proxy = await startProxy(ev.vars.AMQP_URL);
    const url = proxy.url(ev.vars.AMQP_URL);
    // Fresh consumers whose broker connections go through the proxy; a and b stop consuming.
    await a.close();
    await b.close();
    c = await ev.start({ env: { AMQP_URL: url } });
    d = await ev.start({ env: { AMQP_URL: url } });
    publisher = new AmqpClient(url, ev.vars.AMQP_EXCHANGE, ev.vars.AMQP_QUEUE_PREFIX, createLogger("pub", "silent"));
    await publisher.start();
  });
  afterAll(async () => {
    await publisher.close();
    await proxy.close();
  });

  /** Publishes like the outbox relay: retried until confirmed, so a lost confirm means a duplicate. */
  async function publishUntilConfirmed(envelope: DomainEnvelope) {
    for (;;) {
      try {
        await publisher.publishConfirmed([{ routingKey: envelope.type, envelope }]);
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  it("every event reaches every recipient queue exactly once, in order, across connection cuts", async () => {
    const users = [user(), user(), user()];
    const queues = await Promise.all(users.map((u, i) => queueFor(i % 2 ? c : d, u)));
    const total = 120;
    for (let n = 0; n < total; n++) {
      if (n % 40 === 20) proxy.cut();
      const envelope: DomainEnvelope = {
        id: randomUUID(),
        type: "test.notice.sent",
        version: 1,
        occurred_at: new Date().toISOString(),
        realm_id: 1,
        payload: notice({ type: "custom", n }, users.map((u) => u.userId)),
      };
      await publishUntilConfirmed(envelope);
    }
    for (let i = 0; i < users.length; i++) {
      const { events } = await collect(i % 2 ? d : c, users[i], queues[i], total, 20_000);
      expect(events.map((e) => e.n)).toEqual(Array.from({ length: total }, (_, n) => n));
    }
  }, 60_000);
});
