import { Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * The event pipeline's figures on every service's `/metrics`: what its outbox relay published and
 * still holds, and what its RabbitMQ consumers did. They are the process's (one relay and one
 * broker connection per service process), so they live in one registry that each app's
 * `/metrics` appends, and each group is created with the first relay or client: a process
 * without one shows none of its metrics rather than zeros.
 *
 * The pending figures and queue depths are read when Prometheus scrapes. They describe shared
 * state (a schema's outbox, a durable queue), so every replica of a service reports the same
 * value: aggregate them with max(), not sum().
 */
export const pipelineRegistry = new Registry();

/** What a relay tells the metrics; `outbox.ts` registers one per running relay. */
export interface RelayProbe {
  schema: string;
  /** Unpublished rows and the age of the oldest in seconds (0 when there are none). */
  pending(): Promise<{ count: number; oldestSeconds: number }>;
}

/** What a broker connection tells the metrics; `amqp.ts` registers one per client. */
export interface AmqpProbe {
  connected(): boolean;
  /** Ready (not yet delivered) messages of each durable queue this client consumes, and of its dead-letter queue. */
  queueDepths(): Promise<Array<{ queue: string; ready: number; deadLettered: number }>>;
}

let outbox: ReturnType<typeof createOutboxMetrics> | null = null;
let deliveryLag: Histogram | null = null;
let amqp: ReturnType<typeof createAmqpMetrics> | null = null;

const relays = new Set<RelayProbe>();
const clients = new Set<AmqpProbe>();

/**
 * Longest wait for a reading at scrape time. PostgreSQL or RabbitMQ behind a stalled network
 * would otherwise hold `/metrics` past Prometheus's scrape timeout, losing every other figure of
 * the scrape with them.
 */
export const READING_TIMEOUT_MS = 2000;

/** `work`, or `fallback` once `ms` passed (the work goes on unawaited). */
export function within<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * One reading shared by the gauges of a scrape: prom-client collects a registry's metrics
 * concurrently, so each gauge's collect awaits the same promise, which is dropped once settled.
 */
function sharedReading<T>(read: () => Promise<T>): () => Promise<T> {
  let reading: Promise<T> | null = null;
  return () => (reading ??= read().finally(() => (reading = null)));
}

/** A gauge set at each scrape from a shared reading: one series per item, labelled `label`. */
function readingGauge<R>(name: string, help: string, label: string, read: () => Promise<R[]>, series: (r: R) => [string, number]): void {
  new Gauge({
    name,
    help,
    labelNames: [label],
    registers: [pipelineRegistry],
    async collect() {
      const readings = await read();
      this.reset();
      for (const r of readings) {
        const [labelValue, value] = series(r);
        this.set({ [label]: labelValue }, value);
      }
    },
  });
}

interface RelayReading {
  schema: string;
  count: number;
  oldestSeconds: number;
}

function createOutboxMetrics() {
  const registers = [pipelineRegistry];
  const read = sharedReading(() =>
    Promise.all(
      [...relays].map(async (relay): Promise<RelayReading> => {
        // Unknown, not zero, when PostgreSQL does not answer (in time).
        const unknown = { count: Number.NaN, oldestSeconds: Number.NaN };
        const reading = await within(relay.pending().catch(() => unknown), READING_TIMEOUT_MS, unknown);
        return { schema: relay.schema, ...reading };
      }),
    ),
  );
  readingGauge(
    "outbox_pending_events",
    "Events committed to the schema's outbox and not yet published to RabbitMQ (the same figure on every replica)",
    "schema",
    read,
    (r) => [r.schema, r.count],
  );
  readingGauge(
    "outbox_oldest_pending_seconds",
    "Age of the oldest unpublished outbox event, 0 when none waits: more than a few seconds means the relay cannot publish",
    "schema",
    read,
    (r) => [r.schema, r.oldestSeconds],
  );
  return {
    published: new Counter({
      name: "outbox_published_events_total",
      help: "Outbox events this process published to RabbitMQ (each confirmed by the broker before it was marked)",
      labelNames: ["schema"],
      registers,
    }),
    failures: new Counter({
      name: "outbox_publish_failures_total",
      help: "Relay rounds that failed (RabbitMQ or PostgreSQL unreachable); the events wait in the outbox and are retried",
      labelNames: ["schema"],
      registers,
    }),
    batchSize: new Histogram({
      name: "outbox_publish_batch_size",
      help: "Events per batch the relay published (one confirm and one mark each)",
      labelNames: ["schema"],
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 500],
      registers,
    }),
  };
}

function createAmqpMetrics() {
  const registers = [pipelineRegistry];
  const read = sharedReading(async () => {
    const depths: Array<{ queue: string; ready: number; deadLettered: number }> = [];
    for (const client of clients) {
      // Disconnected, a channel closed meanwhile, or no answer in time: no depths from it in this scrape.
      depths.push(...(await within(client.queueDepths().catch(() => []), READING_TIMEOUT_MS, [])));
    }
    return depths;
  });
  new Gauge({
    name: "amqp_connected",
    help: "1 while this process's RabbitMQ connection, its publishing channel and its consumers are up, else 0",
    registers,
    collect() {
      this.set([...clients].every((c) => c.connected()) ? 1 : 0);
    },
  });
  readingGauge(
    "amqp_queue_ready_messages",
    "Messages waiting in a durable queue this process consumes (the same figure on every replica): growing means its consumers fall behind",
    "queue",
    read,
    (q) => [q.queue, q.ready],
  );
  readingGauge(
    "amqp_queue_dead_letters",
    "Messages in the queue's dead-letter queue (<queue>.dead): events no consumer could handle, kept for inspection",
    "queue",
    read,
    (q) => [q.queue, q.deadLettered],
  );
  return {
    consumed: new Counter({
      name: "amqp_consumed_messages_total",
      help: "Events this process's consumers finished, by queue and outcome: handled (acked) or dead_lettered (invalid, never retried); a broker message carrying a run of events counts each",
      labelNames: ["queue", "outcome"],
      registers,
    }),
    published: new Counter({
      name: "amqp_published_messages_total",
      help: "Broker messages this process published and RabbitMQ confirmed: one per event, or one per run of events with AMQP_PUBLISH_BATCHES",
      registers,
    }),
    retries: new Counter({
      name: "amqp_handler_retries_total",
      help: "Failed attempts at a message that is then retried in place (its queue waits behind it)",
      labelNames: ["queue"],
      registers,
    }),
  };
}

/** The outbox counters (created with the first relay). */
export function outboxMetrics() {
  return (outbox ??= createOutboxMetrics());
}

/** The consumer counters (created with the first broker client). */
export function amqpMetrics() {
  return (amqp ??= createAmqpMetrics());
}

/**
 * The events service's delivery lag: from a domain event's creation in its service (inside the
 * action's transaction, just before the commit) until its copies are in the clients' queues,
 * by the two pods' clocks. Created with the first delivery, so only the events service shows it.
 */
export function observeDeliveryLag(seconds: number): void {
  deliveryLag ??= new Histogram({
    name: "events_delivery_lag_seconds",
    help: "From a domain event's creation in its service to its copies in the clients' queues (outbox, broker and fan-out)",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [pipelineRegistry],
  });
  deliveryLag.observe(Math.max(0, seconds));
}

/** Adds a relay's pending figures to the scrape; returns the function that removes them. */
export function watchRelay(probe: RelayProbe): () => void {
  outboxMetrics();
  relays.add(probe);
  return () => relays.delete(probe);
}

/** Adds a broker client's connection and queue depths to the scrape; returns the remover. */
export function watchAmqpClient(probe: AmqpProbe): () => void {
  amqpMetrics();
  clients.add(probe);
  return () => clients.delete(probe);
}
