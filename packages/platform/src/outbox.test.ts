import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { createTestEnv, parseMetrics, sample, startProxy, type TcpProxy, type TestEnv } from "@chat/testkit";
import { AmqpClient } from "./amqp";
import { createPool, withTx } from "./db";
import { createMemoryLogger } from "./logger";
import { createMetrics } from "./metrics";
import { emitEvent, OutboxRelay, type RelayOptions } from "./outbox";
import { outboxPublished } from "./outbox-signal";
import { observeExchange, sleep, until, type Observer } from "./test-support";

const SCHEMA = "relaytest";
let env: TestEnv;
let pool: pg.Pool;
let proxy: TcpProxy;
let amqpUrl: string;
const { log, lines } = createMemoryLogger("relay-test", "debug");

/** Per test: a fresh exchange, so observers see only this test's events. */
let exchange: string;
let observer: Observer;
const toClose: Array<{ close(): Promise<unknown> } | { stop(): Promise<unknown> }> = [];

beforeAll(async () => {
  env = await createTestEnv();
  await env.migrateSchema(SCHEMA);
  pool = createPool(env.databaseUrl, SCHEMA, 8);
  amqpUrl = env.vars.AMQP_URL;
  proxy = await startProxy(amqpUrl);
});

afterAll(async () => {
  await pool.end();
  await proxy.close();
  await env.cleanup();
});

let testNo = 0;
async function setUp(): Promise<void> {
  exchange = `${env.vars.AMQP_EXCHANGE}.${++testNo}`;
  await pool.query("DELETE FROM outbox");
  observer = await observeExchange(amqpUrl, exchange);
  toClose.push(observer);
}

afterEach(async () => {
  proxy.unblock();
  proxy.resume();
  for (const c of toClose.splice(0).reverse()) await ("stop" in c ? c.stop() : c.close());
  const ch = observer.channel;
  await ch.deleteExchange(exchange).catch(() => {});
});

/** An AmqpClient whose connection runs through the proxy, so tests can cut it. */
async function client(): Promise<AmqpClient> {
  const c = new AmqpClient(proxy.url(amqpUrl), exchange, `${env.id}.`, log, 60_000, { reconnectMs: 150, confirmTimeoutMs: 1500 });
  await c.start();
  toClose.push(c);
  return c;
}

function relay(amqp: AmqpClient, opts: Partial<RelayOptions> = {}): OutboxRelay {
  const r = new OutboxRelay({ pool, schema: SCHEMA, amqp, log, pollMs: 100, ...opts });
  toClose.push(r);
  return r;
}

/** Commits `count` events, one transaction each, numbered from `from`. */
async function commit(from: number, count: number, realmId = 1): Promise<void> {
  for (let n = from; n < from + count; n++) {
    await withTx(pool, (tx) => emitEvent(tx, { type: "test.thing.happened", realmId, payload: { n } }));
  }
}

/** A fresh test set-up with a running relay that polls only once a minute: it publishes when woken. */
async function runningRelay(): Promise<AmqpClient> {
  await setUp();
  const amqp = await client();
  relay(amqp, { pollMs: 60_000 }).start();
  await sleep(100);
  return amqp;
}

/** Takes the schema's relay lock as another replica's relay does while it publishes; returns its release. */
async function holdRelayLock(): Promise<() => Promise<void>> {
  const other = await pool.connect();
  await other.query("BEGIN");
  await other.query(`SELECT pg_advisory_xact_lock(hashtext('${SCHEMA}.outbox'))`);
  return async () => {
    await other.query("COMMIT");
    other.release();
  };
}

const numbers = (o: Observer) => o.received.map((e) => (e.payload as { n: number }).n);
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const unpublished = async () => Number((await pool.query("SELECT count(*) FROM outbox WHERE published_at IS NULL")).rows[0].count);

describe("emitEvent", () => {
  it("writes a full envelope inside the caller's transaction; nothing is visible before commit", async () => {
    await setUp();
    const amqp = await client();
    const r = relay(amqp);
    let envelopeId = "";
    await withTx(pool, async (tx) => {
      const env1 = await emitEvent(tx, { type: "test.thing.happened", realmId: 9, payload: { n: 1, nested: { a: [1, "x"] } } });
      envelopeId = env1.id;
      expect(env1).toMatchObject({ type: "test.thing.happened", version: 1, realm_id: 9 });
      expect(await r.drain()).toBe(0); // uncommitted: invisible to the relay
    });
    await expect(
      withTx(pool, async (tx) => {
        await emitEvent(tx, { type: "test.thing.happened", realmId: 9, payload: { n: 2 } });
        throw new Error("business rule failed");
      }),
    ).rejects.toThrow("business rule failed");
    expect(await r.drain()).toBe(1);
    const [got] = await observer.waitFor(1);
    expect(got).toEqual({
      id: envelopeId,
      type: "test.thing.happened",
      version: 1,
      occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      realm_id: 9,
      payload: { n: 1, nested: { a: [1, "x"] } },
    });
    await sleep(200);
    expect(numbers(observer)).toEqual([1]); // the rolled-back event never left
  });
});

describe("OutboxRelay", () => {
  it("publishes in commit order, in batches, each batch confirmed before its rows are deleted", async () => {
    await setUp();
    const amqp = await client();
    const sizes: number[] = [];
    const publish = amqp.publishConfirmed.bind(amqp);
    amqp.publishConfirmed = async (items) => {
      sizes.push(items.length);
      await publish(items);
      // Deleted only after the broker confirmed: the batch is still in the outbox here.
      expect(await unpublished()).toBeGreaterThanOrEqual(items.length);
    };
    await commit(1, 25);
    expect(await relay(amqp, { batchSize: 10 }).drain()).toBe(25);
    expect(sizes).toEqual([10, 10, 5]);
    await observer.waitFor(25);
    expect(numbers(observer)).toEqual(range(1, 25));
    // Published rows leave the table instead of being marked.
    expect(Number((await pool.query("SELECT count(*) FROM outbox")).rows[0].count)).toBe(0);
  });

  it("keeps rows when the broker refuses a publish (no confirm), and sends them once it can", async () => {
    await setUp();
    const amqp = await client();
    const r = relay(amqp);
    await commit(1, 3);
    // The exchange vanishes: the broker closes the publishing channel instead of confirming.
    await observer.channel.deleteExchange(exchange);
    await expect(r.drain()).rejects.toThrow();
    expect(await unpublished()).toBe(3);
    // The client reopens its channel (declaring the exchange again); the observer binds again.
    await until(() => amqp.connected, 5000, () => "publish channel reopened");
    await observer.rebind();
    expect(await r.drain()).toBe(3);
    await observer.waitFor(3);
    expect(numbers(observer)).toEqual([1, 2, 3]);
  });

  it("wakes when its process commits outbox rows instead of waiting for the poll", async () => {
    await runningRelay();
    const t0 = Date.now();
    await commit(1, 1);
    await observer.waitFor(1, 3000);
    expect(Date.now() - t0).toBeLessThan(2000);
    // An autocommit write on the pool wakes it too; a rolled-back one leaves nothing to publish.
    await emitEvent(pool, { type: "test.thing.happened", realmId: 1, payload: { n: 2 } });
    await withTx(pool, async (tx) => {
      await emitEvent(tx, { type: "test.thing.happened", realmId: 1, payload: { n: 99 } });
      throw new Error("changed my mind");
    }).catch(() => {});
    await observer.waitFor(2, 3000);
    expect(Date.now() - t0).toBeLessThan(2000);
    await sleep(200);
    expect(numbers(observer)).toEqual([1, 2]);
  });

  it("a relay woken while another one publishes looks again and publishes its rows", async () => {
    await runningRelay();
    // Another replica's relay holds the schema's lock, as it does while it publishes a batch.
    const release = await holdRelayLock();
    await commit(1, 2);
    await sleep(300);
    expect(observer.received).toHaveLength(0);
    await release();
    const t0 = Date.now();
    await observer.waitFor(2, 3000);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(numbers(observer)).toEqual([1, 2]);
  });

  it("outboxPublished resolves once everything committed before it is published, also after another relay's turn", async () => {
    await runningRelay();
    // Another replica's relay holds the lock: the rows cannot go yet, nor can the wait end.
    const release = await holdRelayLock();
    await commit(1, 2);
    let published = false;
    const waiting = outboxPublished(10_000).then(() => (published = true));
    await sleep(300);
    expect(published).toBe(false);
    await release();
    await waiting;
    expect(await unpublished()).toBe(0);
    await observer.waitFor(2, 3000);
    expect(numbers(observer)).toEqual([1, 2]);
  });

  it("outboxPublished does not wait for the poll when its wake-up came while the relay was publishing", async () => {
    await runningRelay();
    // Commits land while earlier ones are being published, as under load; each caller waits
    // for its own rows. A wait that depended on the 60 s poll would outlast the test.
    const callers = range(1, 20).map(async (n) => {
      await sleep(n * 5);
      await commit(n, 1);
      await outboxPublished(60_000);
      return Number((await pool.query("SELECT count(*) FROM outbox WHERE published_at IS NULL AND (payload->>'n')::int = $1", [n])).rows[0].count);
    });
    expect(await Promise.all(callers)).toEqual(range(1, 20).map(() => 0));
  }, 20_000);

  it("outboxPublished gives up after its timeout while the broker is away (the rows wait)", async () => {
    const amqp = await runningRelay();
    proxy.block();
    await until(() => !amqp.connected, 5000, () => "client notices");
    await commit(1, 1);
    const t0 = Date.now();
    await outboxPublished(300);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(await unpublished()).toBe(1);
  });

  it("resumes after a RabbitMQ outage: events committed meanwhile arrive exactly once, in order", async () => {
    await setUp();
    const amqp = await client();
    relay(amqp).start();
    await commit(1, 3);
    await observer.waitFor(3);

    proxy.block(); // the connection is cut and new ones are refused
    await until(() => !amqp.connected, 5000, () => "client notices the outage");
    await commit(4, 17);
    await sleep(600); // several relay rounds fail meanwhile
    expect(await unpublished()).toBe(17);
    expect(observer.received.length).toBe(3);

    proxy.unblock();
    await observer.waitFor(20, 15_000);
    await sleep(300);
    expect(numbers(observer)).toEqual(range(1, 20));
    expect(await unpublished()).toBe(0);
    expect(lines.some((l) => l.msg === "outbox relay: publish failed, will retry")).toBe(true);
  });

  it("delivers an event once when the connection drops between commit and publish", async () => {
    await setUp();
    const amqp = await client();
    const r = relay(amqp);
    await commit(1, 5);
    proxy.cut(); // connection destroyed underneath, after commit and before the relay ran
    await until(() => !amqp.connected, 5000);
    await expect(r.drain()).rejects.toThrow(/not connected/);
    await until(() => amqp.connected, 5000, () => "reconnected");
    expect(await r.drain()).toBe(5);
    await observer.waitFor(5);
    await sleep(200);
    expect(numbers(observer)).toEqual(range(1, 5));
  });

  it("two relays on one schema never reorder or duplicate (advisory lock)", async () => {
    await setUp();
    const a = relay(await client(), { batchSize: 3, pollMs: 5 });
    const b = relay(await client(), { batchSize: 3, pollMs: 5 });
    a.start();
    b.start();
    const writers = commit(1, 60);
    // Both relays also drain by hand, as hard as they can, while rows keep arriving.
    const hammer = async (r: OutboxRelay) => {
      for (let i = 0; i < 40; i++) await r.drain().catch(() => 0);
    };
    await Promise.all([writers, hammer(a), hammer(b)]);
    await observer.waitFor(60, 15_000);
    await sleep(300);
    expect(numbers(observer)).toEqual(range(1, 60));
  });

  it("prunes rows marked published by an earlier release, and old idempotency records, from its run loop", async () => {
    await setUp();
    const amqp = await client();
    await commit(1, 5);
    // Relays before this release marked what they published instead of deleting it.
    await pool.query("UPDATE outbox SET occurred_at = now() - interval '26 hours', published_at = now() - interval '25 hours' WHERE (payload->>'n')::int <= 2");
    await pool.query("UPDATE outbox SET published_at = now() WHERE (payload->>'n')::int IN (3, 4)");
    // Row 5 is old and unpublished: the relay publishes it (and deletes it), the prune leaves it.
    await pool.query("UPDATE outbox SET occurred_at = now() - interval '30 days' WHERE (payload->>'n')::int = 5");
    const r = relay(amqp, { pruneEveryMs: 100, retentionHours: 24, processedRetentionHours: 48 });
    await pool.query("DELETE FROM processed_events");
    await pool.query(
      "INSERT INTO processed_events (consumer, event_id, processed_at) VALUES ('c', gen_random_uuid(), now() - interval '3 days'), ('c', gen_random_uuid(), now())",
    );
    r.start();
    await until(async () => Number((await pool.query("SELECT count(*) FROM processed_events")).rows[0].count) === 1, 5000, () => "processed_events pruned");
    const left = (await pool.query("SELECT (payload->>'n')::int AS n FROM outbox ORDER BY seq")).rows.map((x) => x.n);
    expect(left).toEqual([3, 4]);
    await observer.waitFor(1);
    expect(numbers(observer)).toEqual([5]);
  });

  it("prunes a day's published rows in chunks below the first recent row, keeping the unpublished and the recently published", async () => {
    await setUp();
    const amqp = await client();
    const r = relay(amqp);
    /** Rows numbered from..to, written `ago` hours back and published `publishedAgo` hours back (null: not yet). */
    const rows = (from: number, to: number, ago: number, publishedAgo: number | null) =>
      pool.query(
        `INSERT INTO outbox (id, type, realm_id, payload, occurred_at, published_at)
         SELECT gen_random_uuid(), 'test.thing.happened', 1, jsonb_build_object('n', g), now() - $3::int * interval '1 hour',
                CASE WHEN $4::int IS NULL THEN NULL ELSE now() - $4::int * interval '1 hour' END
           FROM generate_series($1::int, $2::int) g ORDER BY g`,
        [from, to, ago, publishedAgo],
      );
    await rows(1, 6_000, 30, 29); // old and published: pruned (more than one chunk)
    await rows(6_001, 6_001, 30, null); // old, never published: kept for the relay
    await rows(6_002, 11_000, 30, 29); // pruned
    await rows(11_001, 11_001, 30, 1); // old, published an hour ago (the relay was down): kept
    await rows(11_002, 11_003, 2, 1); // recent: kept
    await rows(11_004, 11_004, 40, 39); // old but written after a recent row (out of seq order): left for a later prune
    expect(await r.prune(24)).toEqual({ outbox: 10_999, processed: 0 });
    const left = (await pool.query("SELECT (payload->>'n')::int AS n FROM outbox ORDER BY seq")).rows.map((x) => x.n);
    expect(left).toEqual([6_001, 11_001, 11_002, 11_003, 11_004]);
    expect(await r.prune(24)).toEqual({ outbox: 0, processed: 0 });

    // Once the recent rows age too, everything published before the cut goes, to the end of the table.
    await pool.query("UPDATE outbox SET occurred_at = now() - interval '50 hours', published_at = now() - interval '49 hours' WHERE (payload->>'n')::int > 11001");
    expect(await r.prune(24)).toEqual({ outbox: 3, processed: 0 });
    await pool.query("UPDATE outbox SET published_at = now() - interval '25 hours' WHERE (payload->>'n')::int = 11001");
    expect(await r.prune(24)).toEqual({ outbox: 1, processed: 0 });
    expect((await pool.query("SELECT (payload->>'n')::int AS n FROM outbox")).rows.map((x) => x.n)).toEqual([6_001]);
    await pool.query("DELETE FROM outbox");
  });
});

describe("OutboxRelay on /metrics", () => {
  const metrics = createMetrics("relay-test");
  const scrape = async () => parseMetrics(await metrics.text());
  const of = (samples: ReturnType<typeof parseMetrics>, name: string) => sample(samples, name, { service: "relay-test", schema: SCHEMA });

  it("lingers before the next batch when more was committed during a confirm, so what follows goes out with it", async () => {
    // Without a linger the relay reads at once when the broker confirms: 1, then 2-3, then 4 and
    // 5 as they come. With one, 4-5 (committed just after the confirm) join 2-3: two batches.
    for (const lingerMs of [0, 600]) {
      await setUp();
      const amqp = await client();
      relay(amqp, { pollMs: 60_000, lingerMs }).start();
      await sleep(100);
      const before = await scrape();
      proxy.pause(); // the first batch's confirm waits
      await commit(1, 1);
      await sleep(150);
      await commit(2, 2); // committed while the relay waits for the confirm
      proxy.resume();
      await sleep(100);
      await commit(4, 2);
      await observer.waitFor(5);
      expect(numbers(observer)).toEqual([1, 2, 3, 4, 5]);
      // The observer may have a batch before the relay has its confirm (and counts it): the
      // metrics are read once they cover all five.
      let after = await scrape();
      const delta = (name: string) => of(after, name)! - (of(before, name) ?? 0);
      for (let tries = 0; delta("outbox_publish_batch_size_sum") < 5 && tries < 100; tries++) {
        await sleep(20);
        after = await scrape();
      }
      expect(delta("outbox_publish_batch_size_sum")).toBe(5);
      if (lingerMs > 0) expect(delta("outbox_publish_batch_size_count")).toBe(2);
      else expect(delta("outbox_publish_batch_size_count")).toBeGreaterThan(2);
      for (const c of toClose.splice(0).reverse()) await ("stop" in c ? c.stop() : c.close());
    }
  });

  it("shows what waits in the outbox and for how long while RabbitMQ is away, then what was published and in what batches", async () => {
    await setUp();
    const amqp = await client();
    const r = relay(amqp);
    r.start();
    await commit(1, 2);
    await observer.waitFor(2);
    // Delivery can precede the relay's confirm: the rows leave the outbox (and are counted) after it.
    await until(async () => of(await scrape(), "outbox_pending_events") === 0, 5000, () => "the first rows published and marked");
    const before = await scrape();
    expect(of(before, "outbox_pending_events")).toBe(0);
    expect(of(before, "outbox_oldest_pending_seconds")).toBe(0);
    const published = of(before, "outbox_published_events_total")!;
    const batches = sample(before, "outbox_publish_batch_size_count", { service: "relay-test", schema: SCHEMA })!;
    const failures = of(before, "outbox_publish_failures_total") ?? 0;

    proxy.block();
    await until(() => !amqp.connected, 5000, () => "client notices the outage");
    await commit(3, 3);
    await sleep(1100);
    const during = await scrape();
    expect(of(during, "outbox_pending_events")).toBe(3);
    expect(of(during, "outbox_oldest_pending_seconds")).toBeGreaterThanOrEqual(1);
    expect(of(during, "outbox_oldest_pending_seconds")).toBeLessThan(30);
    expect(of(during, "outbox_publish_failures_total")).toBeGreaterThan(failures);
    expect(of(during, "outbox_published_events_total")).toBe(published);

    proxy.unblock();
    await observer.waitFor(5, 15_000);
    await until(async () => of(await scrape(), "outbox_pending_events") === 0, 5000, () => "the gauge sees the backlog published");
    const after = await scrape();
    expect(of(after, "outbox_oldest_pending_seconds")).toBe(0);
    expect(of(after, "outbox_published_events_total")).toBe(published + 3);
    expect(sample(after, "outbox_publish_batch_size_sum", { service: "relay-test", schema: SCHEMA })).toBeGreaterThanOrEqual(5);
    expect(sample(after, "outbox_publish_batch_size_count", { service: "relay-test", schema: SCHEMA })).toBeGreaterThan(batches);
  });

  it("a stopped relay leaves the scrape; one whose database does not answer shows NaN, not zero", async () => {
    await setUp();
    const amqp = await client();
    const broken = createPool("postgres://postgres@127.0.0.1:1/nothing", SCHEMA, 1);
    const r = relay(amqp, { pool: broken, schema: "unreachable" });
    r.start();
    const samples = await scrape();
    expect(sample(samples, "outbox_pending_events", { service: "relay-test", schema: "unreachable" })).toBeNaN();
    await r.stop();
    await broken.end();
    expect(sample(await scrape(), "outbox_pending_events", { service: "relay-test", schema: "unreachable" })).toBeUndefined();
  });

  it("a database that stalls does not hold the scrape: the figures show NaN and the rest of /metrics is there", async () => {
    await setUp();
    const amqp = await client();
    const pgProxy = await startProxy(env.databaseUrl);
    const stalled = createPool(pgProxy.url(env.databaseUrl), SCHEMA, 2);
    // Both connections open before the stall, so the scrape's query waits on an established one
    // (a new connection would give up by itself after the pool's connection timeout).
    await Promise.all([stalled.query("SELECT pg_sleep(0.05)"), stalled.query("SELECT pg_sleep(0.05)")]);
    const r = relay(amqp, { pool: stalled, schema: "stalled", pollMs: 60_000 });
    r.start();
    await sleep(200);
    pgProxy.pause();
    try {
      const samples = await scrape();
      expect(sample(samples, "outbox_pending_events", { service: "relay-test", schema: "stalled" })).toBeNaN();
      expect(sample(samples, "outbox_oldest_pending_seconds", { service: "relay-test", schema: "stalled" })).toBeNaN();
      expect(samples.some((x) => x.name === "process_cpu_user_seconds_total")).toBe(true);
    } finally {
      pgProxy.resume();
      await r.stop();
      await stalled.end();
      await pgProxy.close();
    }
  }, 15_000);
});
