import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type pg from "pg";
import type { DomainEnvelope } from "@chat/contracts";
import { createTestEnv, parseMetrics, sample, startProxy, type TcpProxy, type TestEnv } from "@chat/testkit";
import { AmqpClient, ENVELOPES_CONTENT_TYPE, InvalidMessageError, type ConsumerSpec } from "./amqp";
import { createPool } from "./db";
import { oncePerEvent } from "./idempotency";
import { createMemoryLogger } from "./logger";
import { createMetrics } from "./metrics";
import { rawPublisher, sleep, until } from "./test-support";

const SCHEMA = "consumertest";
let env: TestEnv;
let pool: pg.Pool;
let proxy: TcpProxy;
let amqpUrl: string;
let exchange: string;
let prefix: string;
let publisher: Awaited<ReturnType<typeof rawPublisher>>;
const memory = createMemoryLogger("consumer-test", "debug");
const clients: AmqpClient[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  await env.migrateSchema(SCHEMA);
  pool = createPool(env.databaseUrl, SCHEMA, 4);
  amqpUrl = env.vars.AMQP_URL;
  exchange = env.vars.AMQP_EXCHANGE;
  prefix = env.vars.AMQP_QUEUE_PREFIX;
  proxy = await startProxy(amqpUrl);
  publisher = await rawPublisher(amqpUrl, exchange);
});

afterEach(async () => {
  proxy.unblock();
  for (const c of clients.splice(0)) await c.close({ graceMs: 500 });
});

afterAll(async () => {
  await publisher.close();
  await pool.end();
  await proxy.close();
  await env.cleanup();
});

async function client(options: { publishBatches?: boolean } = {}): Promise<AmqpClient> {
  const c = new AmqpClient(proxy.url(amqpUrl), exchange, prefix, memory.log, 60_000, { reconnectMs: 150, ...options });
  await c.start();
  clients.push(c);
  return c;
}

let queueNo = 0;
const queueName = () => `q${++queueNo}`;

function envelope(n: number, overrides: Partial<DomainEnvelope> = {}): DomainEnvelope {
  return { id: randomUUID(), type: "test.thing.happened", version: 1, occurred_at: new Date().toISOString(), realm_id: 1, payload: { n }, ...overrides };
}

const publish = (e: DomainEnvelope | string | Buffer, key = "test.thing.happened") => publisher.publish(key, e);
const n = (e: DomainEnvelope) => (e.payload as { n: number }).n;

/** Consumes with a recorder; the handler can be swapped per test. */
async function consumer(c: AmqpClient, handle: (e: DomainEnvelope) => Promise<void> = async () => {}, extra: Partial<ConsumerSpec> = {}) {
  const seen: number[] = [];
  const name = extra.name ?? queueName();
  await c.consume({
    name,
    bindings: ["test.#"],
    handler: async (e) => {
      seen.push(n(e));
      await handle(e);
    },
    ...extra,
  });
  return { name, seen };
}

/**
 * A consumer with a batch handler whose first batch (envelope 1) waits while `more` publishes,
 * so that all `more` published arrives as the next batch; `after` runs on each batch once it is
 * recorded (and may throw, as a failing batch handler does).
 */
async function batchesAfterAHeldOne(
  c: AmqpClient,
  handle: (e: DomainEnvelope) => Promise<void>,
  more: () => Promise<void>,
  after: (envelopes: DomainEnvelope[]) => Promise<void> = async () => {},
) {
  const batches: number[][] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const recorded = await consumer(c, handle, {
    batchHandler: async (envelopes) => {
      batches.push(envelopes.map(n));
      if (batches.length === 1) await gate;
      await after(envelopes);
    },
  });
  await publish(envelope(1));
  await until(() => batches.length === 1);
  await more();
  await sleep(100);
  release();
  return { ...recorded, batches };
}

async function queueState(name: string) {
  return publisher.channel.checkQueue(prefix + name);
}

/** Takes everything waiting in a queue (the dead-letter queue, typically). */
async function drainQueue(name: string): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const msg = await publisher.channel.get(prefix + name, { noAck: true });
    if (!msg) return out;
    out.push(msg.content.toString("utf8"));
  }
}

describe("AmqpClient.listen", () => {
  async function listener(c: AmqpClient, name: string) {
    const seen: number[] = [];
    let ready = 0;
    const queue = await c.listen({ name, bindings: ["test.#"], handler: (e) => seen.push(n(e)), onReady: () => ready++ });
    if (!queue) throw new Error("listener not declared");
    return { queue, seen, ready: () => ready };
  }

  /** Asked on a connection of its own: a failed check closes the channel that asked. */
  async function queueStatus(queue: string): Promise<string> {
    const conn = await amqp.connect(amqpUrl);
    try {
      const ch = await conn.createChannel();
      ch.on("error", () => {});
      return await ch.checkQueue(queue).then(
        () => "open",
        (err: { code?: number }) => (err.code === 405 ? "another connection's" : err.code === 404 ? "absent" : String(err.code)),
      );
    } finally {
      await conn.close().catch(() => {});
    }
  }

  it("every process gets its own copy, on a queue that goes when its connection does", async () => {
    const [a, b] = [await client(), await client()];
    const name = queueName();
    const [onA, onB] = [await listener(a, name), await listener(b, name)];
    expect(onA.queue).not.toBe(onB.queue);
    expect([onA.ready(), onB.ready()]).toEqual([1, 1]);
    await publish(envelope(1));
    await publish("not json");
    await publish(envelope(2));
    await until(() => onA.seen.length === 2 && onB.seen.length === 2);
    expect([onA.seen, onB.seen]).toEqual([[1, 2], [1, 2]]);
    expect(memory.lines.some((l) => l.msg === "listener message ignored")).toBe(true);
    expect(await queueStatus(onA.queue)).toBe("another connection's");
    await a.close();
    await b.close();
    // Nothing is left behind for messages to pile up in.
    expect([await queueStatus(onA.queue), await queueStatus(onB.queue)]).toEqual(["absent", "absent"]);
  });

  it("is declared again after a reconnection, and says so (what was published meanwhile is missed)", async () => {
    const c = await client();
    const on = await listener(c, queueName());
    proxy.block();
    await until(() => !c.connected, 5000, () => "client notices");
    await publish(envelope(1));
    proxy.unblock();
    await until(() => on.ready() === 2, 10_000, () => "declared again");
    await publish(envelope(2));
    await until(() => on.seen.length === 1);
    expect(on.seen).toEqual([2]);
  });
});

describe("AmqpClient.consume", () => {
  it("declares a durable queue (and its .dead queue) that keeps messages while nobody consumes", async () => {
    const first = await client();
    const { name } = await consumer(first);
    await first.close();
    clients.splice(clients.indexOf(first), 1);
    await publish(envelope(1));
    await publish(envelope(2));
    expect((await queueState(name)).messageCount).toBe(2);
    expect((await queueState(`${name}.dead`)).messageCount).toBe(0);
    const second = await client();
    const { seen } = await consumer(second, async () => {}, { name });
    await until(() => seen.length === 2);
    expect(seen).toEqual([1, 2]);
  });

  it("handles messages strictly one at a time, in publish order", async () => {
    const c = await client();
    let active = 0;
    let maxActive = 0;
    const { seen } = await consumer(c, async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(Math.random() * 5);
      active--;
    });
    for (let i = 1; i <= 40; i++) await publish(envelope(i));
    await until(() => seen.length === 40);
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(maxActive).toBe(1);
  });

  it("retries a transient failure in place, keeping the order behind it", async () => {
    const c = await client();
    let failures = 0;
    const { seen, name } = await consumer(c, async (e) => {
      if (n(e) === 2 && failures < 2) {
        failures++;
        throw new Error("database briefly unavailable");
      }
    });
    for (let i = 1; i <= 3; i++) await publish(envelope(i));
    await until(() => seen.length === 5);
    expect(seen).toEqual([1, 2, 2, 2, 3]);
    expect(memory.lines.filter((l) => l.msg === "handler failed, retrying" && l.queue === name)).toHaveLength(2);
    await until(async () => (await queueState(name)).messageCount === 0);
  });

  it("acks only after the handler finished: a message in progress when the connection dies comes back", async () => {
    const c = await client();
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { seen } = await consumer(c, async () => {
      calls++;
      if (calls === 1) await gate; // still working when the connection goes
    });
    await publish(envelope(1));
    await until(() => calls === 1);
    proxy.cut();
    release();
    await until(() => seen.length >= 2, 10_000, () => `seen ${JSON.stringify(seen)}`);
    expect(seen).toEqual([1, 1]);
  });

  it("dead-letters and logs invalid payloads instead of retrying them, then carries on", async () => {
    const c = await client();
    const Payload = z.object({ n: z.number(), required: z.string() });
    const { seen, name } = await consumer(c, async (e) => {
      if (n(e) === 3) throw new InvalidMessageError("refers to a realm that does not exist");
      if (n(e) === 4) Payload.parse(e.payload); // the payload breaks its contract
    });
    await publish("{not json");
    await publish(JSON.stringify({ id: "nope", type: "test.thing.happened" }));
    await publish(envelope(3));
    await publish(envelope(4));
    await publish(envelope(5));
    await until(() => seen.includes(5));
    expect(seen).toEqual([3, 4, 5]);
    await until(async () => (await queueState(`${name}.dead`)).messageCount === 4);
    const dead = await drainQueue(`${name}.dead`);
    expect(dead[0]).toBe("{not json");
    expect(JSON.parse(dead[1])).toEqual({ id: "nope", type: "test.thing.happened" });
    expect(dead.slice(2).map((d) => n(JSON.parse(d)))).toEqual([3, 4]);
    const logged = memory.lines.filter((l) => l.queue === name && l.level === 50);
    expect(logged.map((l) => l.msg)).toEqual(["invalid message dead-lettered", "invalid message dead-lettered", "message dead-lettered", "message dead-lettered"]);
    expect(logged[2].err).toContain("does not exist");
    expect((await queueState(name)).messageCount).toBe(0);
  });

  it("with a batch handler, what arrives while a batch is handled comes as the next batch, in order, acked together", async () => {
    const c = await client();
    const { name, batches } = await batchesAfterAHeldOne(
      c,
      async () => {
        throw new Error("not used while batches succeed");
      },
      async () => {
        for (let i = 2; i <= 9; i++) await publish(envelope(i));
      },
    );
    await until(() => batches.flat().length === 9);
    expect(batches).toEqual([[1], [2, 3, 4, 5, 6, 7, 8, 9]]);
    // All acked: nothing is waiting or handed out, and nothing comes again after a restart.
    await until(async () => (await queueState(name)).messageCount === 0);
    await c.close();
    clients.splice(clients.indexOf(c), 1);
    expect((await queueState(name)).messageCount).toBe(0);
  });

  it("a batch that fails is handled one message at a time: the invalid one is dead-lettered, the others done once each", async () => {
    const c = await client();
    const { seen, name, batches } = await batchesAfterAHeldOne(
      c,
      async (e) => {
        if (n(e) === 3) throw new InvalidMessageError("refers to a realm that does not exist");
      },
      async () => {
        for (let i = 2; i <= 5; i++) await publish(envelope(i));
        await publish("{not json");
      },
      async (envelopes) => {
        if (envelopes.some((e) => n(e) === 3)) throw new InvalidMessageError("one of them is invalid");
      },
    );
    await until(() => seen.length === 4);
    expect(batches).toEqual([[1], [2, 3, 4, 5]]);
    expect(seen).toEqual([2, 3, 4, 5]);
    await until(async () => (await queueState(`${name}.dead`)).messageCount === 2);
    const dead = await drainQueue(`${name}.dead`);
    expect(dead.map((d) => (d.startsWith("{not") ? d : n(JSON.parse(d))))).toEqual(["{not json", 3]);
    expect(memory.lines.filter((l) => l.queue === name && l.msg === "batch failed, handling its messages one by one")).toHaveLength(1);
    await until(async () => (await queueState(name)).messageCount === 0);
  });

  it("with oncePerEvent, a redelivered envelope does its work once", async () => {
    await pool.query("CREATE TABLE IF NOT EXISTS effects (event_id uuid, n int)");
    const c = await client();
    const outcomes: boolean[] = [];
    const { seen } = await consumer(c, async (e) => {
      outcomes.push(await oncePerEvent(pool, "test-consumer", e.id, (tx) => tx.query("INSERT INTO effects VALUES ($1, $2)", [e.id, n(e)]).then(() => {})));
    });
    const dup = envelope(1);
    await publish(dup);
    await publish(dup);
    await publish(envelope(2));
    await until(() => outcomes.length === 3);
    expect(seen).toEqual([1, 1, 2]);
    expect(outcomes).toEqual([true, false, true]);
    const { rows } = await pool.query("SELECT n FROM effects ORDER BY n");
    expect(rows.map((r) => r.n)).toEqual([1, 2]);
    // A failing piece of work records nothing, so its retry does the work.
    const failing = envelope(3);
    await expect(oncePerEvent(pool, "test-consumer", failing.id, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await oncePerEvent(pool, "test-consumer", failing.id, async () => {})).toBe(true);
    // Another consumer keeps its own record of the same envelope.
    expect(await oncePerEvent(pool, "other-consumer", dup.id, async () => {})).toBe(true);
  });

  it("reconnects after losing the broker: consumers are declared again and resume", async () => {
    const c = await client();
    const { seen } = await consumer(c);
    await publish(envelope(1));
    await until(() => seen.length === 1);
    await sleep(200); // let the ack reach the broker; an unacked message would rightly come back
    proxy.block();
    await until(() => !c.connected, 5000, () => "client notices");
    await publish(envelope(2)); // published while the consumer is away: waits in its durable queue
    await publish(envelope(3));
    await sleep(400);
    expect(seen).toEqual([1]);
    proxy.unblock();
    await until(() => seen.length === 3, 10_000, () => `seen ${JSON.stringify(seen)}; log: ${JSON.stringify(memory.lines.slice(-8).map((l) => [l.msg, l.err]))}`);
    expect(seen).toEqual([1, 2, 3]);
    expect(c.connected).toBe(true);
    expect(memory.lines.some((l) => l.msg === "amqp connection lost, reconnecting")).toBe(true);
  });

  it("starts even while the broker is down and connects when it comes back", async () => {
    proxy.block();
    const c = await client();
    expect(c.connected).toBe(false);
    const { seen } = await consumer(c);
    await publish(envelope(1)); // the queue does not exist yet, so this one is unroutable and lost
    proxy.unblock();
    await until(() => c.connected, 5000);
    await publish(envelope(2));
    await until(() => seen.length === 1);
    expect(seen).toEqual([2]);
  });

  it("single active consumer: one replica handles the queue, the other takes over when it leaves", async () => {
    const a = await client();
    const b = await client();
    const name = queueName();
    const seenA = (await consumer(a, async () => {}, { name, singleActiveConsumer: true })).seen;
    const seenB = (await consumer(b, async () => {}, { name, singleActiveConsumer: true })).seen;
    for (let i = 1; i <= 5; i++) await publish(envelope(i));
    await until(() => seenA.length + seenB.length === 5);
    expect([seenA, seenB].filter((s) => s.length > 0)).toEqual([[1, 2, 3, 4, 5]]);
    const [active, standby, standbySeen] = seenA.length ? [a, b, seenB] : [b, a, seenA];
    await active.close();
    for (let i = 6; i <= 8; i++) await publish(envelope(i));
    await until(() => standbySeen.length === 3, 10_000);
    expect(standbySeen).toEqual([6, 7, 8]);
    expect(standby.connected).toBe(true);
  });

  it("close() lets the message being handled finish and ack before disconnecting", async () => {
    const c = await client();
    const done: number[] = [];
    const { name } = await consumer(c, async (e) => {
      await sleep(300);
      done.push(n(e));
    });
    await publish(envelope(1));
    await sleep(100);
    await c.close();
    expect(done).toEqual([1]);
    expect((await queueState(name)).messageCount).toBe(0);
  });
});

describe("runs of envelopes in one message (publishBatches)", () => {
  const keys = ["test.a.happened", "test.a.happened", "test.b.happened", "test.a.happened", "test.a.happened"];
  const items = () => keys.map((routingKey, i) => ({ routingKey, envelope: envelope(i + 1, { type: routingKey }) }));

  /** A plain queue bound to the exchange, to count what the broker carried. */
  async function tap(binding: string): Promise<string> {
    const name = queueName();
    await publisher.channel.assertQueue(prefix + name, { durable: false, autoDelete: false, arguments: { "x-expires": 60_000 } });
    await publisher.channel.bindQueue(prefix + name, exchange, binding);
    return name;
  }

  it("a relay's consecutive envelopes of one routing key travel as one message; consumers and listeners get each, in order", async () => {
    const batching = await client({ publishBatches: true });
    const all = await consumer(await client(), async () => {}, { bindings: ["test.#"] });
    const onlyB = await consumer(await client(), async () => {}, { bindings: ["test.b.*"] });
    const batched: number[] = [];
    await consumer(await client(), async () => {}, { bindings: ["test.#"], batchHandler: async (es) => void batched.push(...es.map(n)) });
    const heard: number[] = [];
    await (await client()).listen({ name: queueName(), bindings: ["test.#"], handler: (e) => heard.push(n(e)), onReady: () => {} });
    const wire = await tap("test.#");

    await batching.publishConfirmed(items());
    await until(
      () => all.seen.length === 5 && batched.length === 5 && heard.length === 5,
      10_000,
      () => JSON.stringify({ all: all.seen, batched, heard }),
    );
    expect(all.seen).toEqual([1, 2, 3, 4, 5]);
    expect(batched).toEqual([1, 2, 3, 4, 5]);
    expect(heard).toEqual([1, 2, 3, 4, 5]);
    await until(() => onlyB.seen.length === 1);
    expect(onlyB.seen).toEqual([3]);
    const carried = await drainQueue(wire);
    expect(carried.map((m) => JSON.parse(m)).map((b) => (Array.isArray(b) ? b.map(n) : n(b)))).toEqual([[1, 2], 3, [4, 5]]);
    await until(async () => (await queueState(all.name)).messageCount === 0);
  });

  it("without the option every envelope is a message of its own, as consumers of earlier releases read them", async () => {
    const plain = await client();
    const wire = await tap("test.#");
    await plain.publishConfirmed(items());
    await until(async () => (await queueState(wire)).messageCount === 5);
    expect((await drainQueue(wire)).map((m) => n(JSON.parse(m)))).toEqual([1, 2, 3, 4, 5]);
  });

  it("an item of a run that is not an envelope, or that its handler refuses, goes alone to the dead-letter queue; the rest are handled", async () => {
    const c = await client();
    const { seen, name } = await consumer(c, async (e) => {
      if (n(e) === 4) throw new InvalidMessageError("refers to a realm that does not exist");
    });
    await publish(JSON.stringify([envelope(1), { id: "nope" }, envelope(3), envelope(4), envelope(5)]), "test.thing.happened");
    await publisher.publish("test.thing.happened", [envelope(1), { id: "nope" }, envelope(3), envelope(4), envelope(5)], { contentType: ENVELOPES_CONTENT_TYPE });
    await publisher.publish("test.thing.happened", [{ id: "nope" }], { contentType: ENVELOPES_CONTENT_TYPE });
    await publisher.publish("test.thing.happened", { not: "an array" }, { contentType: ENVELOPES_CONTENT_TYPE });
    await publish(envelope(6));
    await until(() => seen.includes(6));
    // The first array came without the content type: one message that is not an envelope.
    expect(seen).toEqual([1, 3, 4, 5, 6]);
    await until(async () => (await queueState(`${name}.dead`)).messageCount === 5);
    // Whole messages reach it through the broker's dead-lettering, items as copies: in any order.
    const dead = (await drainQueue(`${name}.dead`)).map((d) => JSON.parse(d));
    const described = dead.map((d) => (Array.isArray(d) ? `array of ${d.length}` : d.id === "nope" ? "nope" : d.payload ? `envelope ${d.payload.n}` : JSON.stringify(d)));
    expect(described.sort()).toEqual(["array of 5", "envelope 4", "nope", "nope", '{"not":"an array"}']);
    expect((await queueState(name)).messageCount).toBe(0);
  });

  it("a failed batch of runs is handled one envelope at a time, and each message is settled once", async () => {
    const c = await client();
    const { seen, name, batches } = await batchesAfterAHeldOne(
      c,
      async (e) => {
        if (n(e) === 3) throw new InvalidMessageError("refers to a realm that does not exist");
      },
      async () => {
        await publisher.publish("test.thing.happened", [envelope(2), envelope(3)], { contentType: ENVELOPES_CONTENT_TYPE });
        await publisher.publish("test.thing.happened", [envelope(4), envelope(5)], { contentType: ENVELOPES_CONTENT_TYPE });
      },
      async (envelopes) => {
        if (envelopes.some((e) => n(e) === 3)) throw new InvalidMessageError("one of them is invalid");
      },
    );
    await until(() => seen.length === 4);
    expect(batches).toEqual([[1], [2, 3, 4, 5]]);
    expect(seen).toEqual([2, 3, 4, 5]);
    await until(async () => (await queueState(`${name}.dead`)).messageCount === 1);
    expect((await drainQueue(`${name}.dead`)).map((d) => n(JSON.parse(d)))).toEqual([3]);
    await until(async () => (await queueState(name)).messageCount === 0);
    // Nothing was acked twice: the channel is still open and takes the next message.
    await publish(envelope(6));
    await until(() => batches.flat().includes(6));
  });
});

describe("AmqpClient on /metrics", () => {
  const metrics = createMetrics("consumer-test");
  const scrape = async () => parseMetrics(await metrics.text());
  const count = (samples: ReturnType<typeof parseMetrics>, queue: string, outcome: string) =>
    sample(samples, "amqp_consumed_messages_total", { service: "consumer-test", queue, outcome }) ?? 0;

  it("counts what each consumer handled, retried and dead-lettered, and shows its queue's depth and dead letters", async () => {
    const c = await client();
    let failures = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { seen, name } = await consumer(c, async (e) => {
      if (n(e) === 2 && failures++ === 0) throw new Error("database briefly unavailable");
      if (n(e) === 3) throw new InvalidMessageError("refers to a realm that does not exist");
      if (n(e) === 4) await gate;
    });
    await publish("{not json");
    for (let i = 1; i <= 7; i++) await publish(envelope(i));
    await until(() => seen.includes(4));
    // 5, 6 and 7 are delivered (prefetch) but wait behind 4: nothing is ready in the queue.
    await until(async () => sample(await scrape(), "amqp_queue_dead_letters", { service: "consumer-test", queue: name }) === 2);
    const held = await scrape();
    expect(sample(held, "amqp_queue_ready_messages", { service: "consumer-test", queue: name })).toBe(0);
    expect(count(held, name, "handled")).toBe(2);
    expect(count(held, name, "dead_lettered")).toBe(2);
    expect(sample(held, "amqp_handler_retries_total", { service: "consumer-test", queue: name })).toBe(1);
    expect(sample(held, "amqp_connected", { service: "consumer-test" })).toBe(1);

    release();
    await until(() => seen.includes(7));
    await until(async () => count(await scrape(), name, "handled") === 6);
    expect(count(await scrape(), name, "dead_lettered")).toBe(2);
  });

  it("amqp_connected is 0 while the broker is away, and queue depths are left out rather than guessed", async () => {
    const c = await client();
    const { name } = await consumer(c);
    expect(sample(await scrape(), "amqp_connected", { service: "consumer-test" })).toBe(1);
    proxy.block();
    await until(() => !c.connected, 5000, () => "client notices the outage");
    const down = await scrape();
    expect(sample(down, "amqp_connected", { service: "consumer-test" })).toBe(0);
    expect(sample(down, "amqp_queue_ready_messages", { service: "consumer-test", queue: name })).toBeUndefined();
    proxy.unblock();
    await until(() => c.connected, 10_000, () => "client reconnects");
    expect(sample(await scrape(), "amqp_connected", { service: "consumer-test" })).toBe(1);
  });
});
