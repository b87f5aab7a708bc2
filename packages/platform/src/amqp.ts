import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import amqp from "amqplib";
import { DomainEnvelope } from "@chat/contracts";
import type { BaseConfig } from "./config";
import type { Logger } from "./logger";
import { amqpMetrics, watchAmqpClient } from "./pipeline-metrics";

export interface ConsumerSpec {
  /** Queue name without the deployment prefix, e.g. `events.client`. */
  name: string;
  /** Routing-key patterns on the domain exchange (`accounts.user.*`, `#`). */
  bindings: string[];
  /** Messages in flight per consumer; they are still handled one at a time, in order. */
  prefetch?: number;
  /** Only one consumer of this queue is active at a time across all replicas (keeps order). */
  singleActiveConsumer?: boolean;
  /**
   * Does the work and makes it durable. Resolving acks the message. Throwing an
   * `InvalidMessageError` (or a zod validation error: the payload breaks its contract)
   * dead-letters it; any other error is retried with backoff, in place, keeping the order.
   */
  handler: (envelope: DomainEnvelope) => Promise<void>;
  /**
   * Optional: the messages that arrived while the previous ones were being handled, together,
   * in order (at most `prefetch` of them), acked together when it resolves. It must do what
   * `handler` does for each and be safe to repeat: if it throws, the same messages go through
   * `handler` one by one, with the retries and dead-lettering described there.
   */
  batchHandler?: (envelopes: DomainEnvelope[]) => Promise<void>;
}

/**
 * A listener: every process that declares one gets its own copy of each matching message, on a
 * queue of its own that lives as long as its connection (for dropping in-process copies of
 * another service's data). Best effort: nothing is acked or retried, and messages published
 * while the process was disconnected are not seen, so `onReady` runs after every (re)declaration
 * and must forget whatever such a message would have changed.
 */
export interface ListenerSpec {
  /** Queue name without the deployment prefix; each process adds a suffix of its own. */
  name: string;
  bindings: string[];
  handler: (envelope: DomainEnvelope) => void;
  onReady: () => void;
}

/** A message that can never be handled: dead-lettered and logged, never retried. */
export class InvalidMessageError extends Error {}

interface PublishItem {
  routingKey: string;
  envelope: DomainEnvelope;
}

/**
 * The content type of a message that carries several envelopes (a JSON array of them, in order).
 * Consumers of this release read both forms; relays publish it only when told to
 * (`publishBatches`), after every consumer runs a release that reads it (docs/operating.md).
 */
export const ENVELOPES_CONTENT_TYPE = "application/vnd.chat.envelopes+json";

export interface AmqpClientOptions {
  /**
   * Publish a run of consecutive envelopes with the same routing key as one message (a JSON
   * array, `ENVELOPES_CONTENT_TYPE`) rather than one message each: the broker's CPU per channel
   * message at ten subscribers fell by a fifth to three quarters (bench/README.md, rounds 14 and
   * 15). Off by default: consumers of releases before it dead-letter such messages.
   */
  publishBatches?: boolean;
  /** Longest wait for the broker's publisher confirms before a publish counts as failed. */
  confirmTimeoutMs?: number;
  /** Delay between reconnection attempts. */
  reconnectMs?: number;
  /** AMQP heartbeat (seconds) unless the URL sets one: detects a silently dead connection. */
  heartbeatSeconds?: number;
}

/** One live consumer on one channel. */
interface ConsumerRun {
  spec: ConsumerSpec;
  ch: amqp.Channel;
  open: boolean;
  tag?: string;
  /** The message being handled and those queued behind it, strictly one after another. */
  chain: Promise<void>;
  /** Its counters on `/metrics`. */
  counts: ConsumerCounts;
}

interface ConsumerCounts {
  handled: { inc(n?: number): void };
  deadLettered: { inc(): void };
  retried: { inc(): void };
}

function consumerCounts(queue: string): ConsumerCounts {
  const m = amqpMetrics();
  return {
    handled: m.consumed.labels(queue, "handled"),
    deadLettered: m.consumed.labels(queue, "dead_lettered"),
    retried: m.retries.labels(queue),
  };
}

/** Thrown by a contract's `parse()`: the payload can never become valid by retrying. */
function isValidationError(err: unknown): boolean {
  const name = (err as { name?: string } | null)?.name;
  return err instanceof InvalidMessageError || name === "ZodError" || name === "$ZodError";
}

/**
 * One RabbitMQ connection per process that reconnects by itself: publishers get an error while it
 * is down (the outbox keeps the events); consumers are declared again when it comes back.
 */
export class AmqpClient {
  private conn: amqp.ChannelModel | null = null;
  private confirm: amqp.ConfirmChannel | null = null;
  private consumers: ConsumerSpec[] = [];
  private listeners: ListenerSpec[] = [];
  /** In the names of this process's listener queues (in Kubernetes, the pod's name). */
  private readonly host = hostname();
  private runs: ConsumerRun[] = [];
  private closing = false;
  private connecting: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly opts: Required<AmqpClientOptions>;
  private readonly connectedListeners = new Set<() => void>();
  private unwatch: (() => void) | null = null;

  /** The client a service starts with: broker, exchange, queue names and batching from its configuration. */
  static fromConfig(config: BaseConfig, log: Logger): AmqpClient {
    return new AmqpClient(config.AMQP_URL, config.AMQP_EXCHANGE, config.AMQP_QUEUE_PREFIX, log, config.AMQP_QUEUE_EXPIRES_MS, {
      publishBatches: config.AMQP_PUBLISH_BATCHES,
    });
  }

  constructor(
    private readonly url: string,
    private readonly exchange: string,
    private readonly queuePrefix: string,
    private readonly log: Logger,
    private readonly queueExpiresMs?: number,
    options: AmqpClientOptions = {},
  ) {
    this.opts = { confirmTimeoutMs: 10_000, reconnectMs: 1000, heartbeatSeconds: 10, publishBatches: false, ...options };
  }

  /**
   * Ready messages of each consumed queue and of its dead-letter queue, for `/metrics`. Asked on a
   * channel of its own: a passive declare of a queue that is gone closes the channel it was
   * asked on, which must not be a consumer's.
   */
  private async queueDepths(): Promise<Array<{ queue: string; ready: number; deadLettered: number }>> {
    const conn = this.conn;
    if (!conn || this.consumers.length === 0) return [];
    let ch: amqp.Channel | null = null;
    const count = async (queue: string): Promise<number> => {
      try {
        if (!ch) {
          ch = await conn.createChannel();
          ch.on("error", () => {}); // a missing queue: the promise below says so
        }
        return (await ch.checkQueue(queue)).messageCount;
      } catch {
        ch = null; // the broker closed the channel; the next queue gets a new one
        return Number.NaN;
      }
    };
    const depths = [];
    try {
      for (const spec of this.consumers) {
        const queue = this.queuePrefix + spec.name;
        depths.push({ queue: spec.name, ready: await count(queue), deadLettered: await count(queue + ".dead") });
      }
    } finally {
      await (ch as amqp.Channel | null)?.close().catch(() => {});
    }
    return depths;
  }

  /** Connected, publishing channel open and every consumer declared. */
  get connected(): boolean {
    return this.conn !== null && this.confirm !== null && this.connecting === null;
  }

  /** Calls `listener` after every (re)connection; returns the unsubscribe function. */
  onConnected(listener: () => void): () => void {
    this.connectedListeners.add(listener);
    return () => this.connectedListeners.delete(listener);
  }

  private notifyConnected(): void {
    for (const l of this.connectedListeners) {
      try {
        l();
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, "amqp connected listener failed");
      }
    }
  }

  /** Connects (retrying in the background if the broker is down); resolves after the first attempt. */
  async start(): Promise<void> {
    this.unwatch ??= watchAmqpClient({ connected: () => this.connected, queueDepths: () => this.queueDepths() });
    await this.connect();
  }

  private connectUrl(): string {
    const u = new URL(this.url);
    if (!u.searchParams.has("heartbeat")) u.searchParams.set("heartbeat", String(this.opts.heartbeatSeconds));
    return u.toString();
  }

  private connect(): Promise<void> {
    if (this.connecting) return this.connecting;
    if (this.closing) return Promise.resolve();
    this.connecting = (async () => {
      let conn: amqp.ChannelModel | null = null;
      try {
        // amqplib leaves Nagle's algorithm on, and writes a message of 2 KB or more (its frames)
        // in two writes, as it does several messages in a row: the second write then waited for
        // the broker's delayed ACK of the first, 40 ms, and so did the confirm (at 100
        // subscribers a message event is over 2 KB: bench/README.md, round 14).
        conn = await amqp.connect(this.connectUrl(), { noDelay: true, clientProperties: { connection_name: this.queuePrefix + "service" } });
        const current = conn;
        conn.on("error", (err) => this.log.warn({ err: err.message }, "amqp connection error"));
        conn.on("close", () => this.onClose(current));
        if (this.closing) {
          await conn.close().catch(() => {});
          return;
        }
        this.conn = conn;
        await this.openConfirmChannel(conn);
        this.runs = [];
        for (const spec of this.consumers) await this.setUpConsumer(spec);
        for (const spec of this.listeners) await this.setUpListener(spec);
        this.log.info("amqp connected");
        this.notifyConnected();
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, "amqp connect failed, retrying");
        await conn?.close().catch(() => {});
        if (this.conn === conn) {
          this.conn = null;
          this.confirm = null;
        }
        this.scheduleRetry();
      } finally {
        this.connecting = null;
      }
    })();
    return this.connecting;
  }

  /**
   * The publishing channel. A channel-level error (for example a missing exchange) closes only
   * the channel, so it is reopened on the same connection rather than left dead.
   */
  private async openConfirmChannel(conn: amqp.ChannelModel): Promise<void> {
    const confirm = await conn.createConfirmChannel();
    confirm.on("error", (err) => this.log.warn({ err: (err as Error).message }, "amqp publish channel error"));
    confirm.on("close", () => {
      if (this.confirm === confirm) this.confirm = null;
      if (this.closing || this.conn !== conn) return;
      setTimeout(() => {
        if (this.closing || this.conn !== conn || this.confirm) return;
        this.openConfirmChannel(conn).catch((err) => this.log.warn({ err: (err as Error).message }, "amqp publish channel reopen failed"));
      }, 100).unref();
    });
    await confirm.assertExchange(this.exchange, "topic", { durable: true });
    this.confirm = confirm;
    // A reopen on a live connection is a reconnection for publishers too (connect() notifies itself).
    if (!this.connecting) this.notifyConnected();
  }

  private onClose(conn: amqp.ChannelModel): void {
    if (this.conn !== conn) return;
    this.conn = null;
    this.confirm = null;
    for (const run of this.runs) run.open = false;
    this.runs = [];
    if (!this.closing) {
      this.log.warn("amqp connection lost, reconnecting");
      this.scheduleRetry();
    }
  }

  private scheduleRetry(): void {
    if (this.closing || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, this.opts.reconnectMs);
  }

  /** Publishes persistent messages and waits until the broker confirms every one. */
  async publishConfirmed(items: PublishItem[]): Promise<void> {
    const ch = this.confirm;
    if (!ch) throw new Error("RabbitMQ is not connected");
    let messages = 0;
    for (let i = 0; i < items.length; ) {
      const { routingKey, envelope } = items[i];
      let end = i + 1;
      if (this.opts.publishBatches) while (end < items.length && items[end].routingKey === routingKey) end++;
      if (end - i === 1) {
        ch.publish(this.exchange, routingKey, Buffer.from(JSON.stringify(envelope)), {
          persistent: true,
          messageId: envelope.id,
          contentType: "application/json",
          type: envelope.type,
        });
      } else {
        const run = items.slice(i, end).map((item) => item.envelope);
        ch.publish(this.exchange, routingKey, Buffer.from(JSON.stringify(run)), {
          persistent: true,
          messageId: envelope.id,
          contentType: ENVELOPES_CONTENT_TYPE,
          type: envelope.type,
        });
      }
      i = end;
      messages++;
    }
    // A connection that died without a close (no RST) would never confirm nor fail.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("RabbitMQ did not confirm in time")), this.opts.confirmTimeoutMs);
    });
    try {
      await Promise.race([ch.waitForConfirms(), timeout]);
      amqpMetrics().published.inc(messages);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Registers a durable consumer; it is (re)declared on every (re)connection. */
  async consume(spec: ConsumerSpec): Promise<void> {
    this.consumers.push(spec);
    if (this.conn) await this.setUpConsumer(spec);
  }

  private async setUpConsumer(spec: ConsumerSpec): Promise<void> {
    const conn = this.conn;
    if (!conn) return;
    const queue = this.queuePrefix + spec.name;
    const dead = queue + ".dead";
    const ch = await conn.createChannel();
    const run: ConsumerRun = { spec, ch, open: true, chain: Promise.resolve(), counts: consumerCounts(spec.name) };
    ch.on("error", (err) => this.log.warn({ queue: spec.name, err: (err as Error).message }, "amqp consumer channel error"));
    ch.on("close", () => {
      run.open = false;
      this.runs = this.runs.filter((r) => r !== run);
      if (this.closing || this.conn !== conn) return;
      // Only this channel died (the connection lives on): declare the consumer again shortly.
      setTimeout(() => {
        if (this.closing || this.conn !== conn) return;
        this.setUpConsumer(spec).catch((err) => this.log.warn({ queue: spec.name, err: (err as Error).message }, "amqp consumer re-declare failed"));
      }, this.opts.reconnectMs).unref();
    });
    this.runs.push(run);
    await ch.assertExchange(this.exchange, "topic", { durable: true });
    const expiry: Record<string, unknown> = this.queueExpiresMs ? { "x-expires": this.queueExpiresMs } : {};
    await ch.assertQueue(dead, { durable: true, arguments: expiry });
    const args: Record<string, unknown> = { ...expiry, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dead };
    if (spec.singleActiveConsumer) args["x-single-active-consumer"] = true;
    await ch.assertQueue(queue, { durable: true, arguments: args });
    for (const key of spec.bindings) await ch.bindQueue(queue, this.exchange, key);
    await ch.prefetch(spec.prefetch ?? 50);

    // Messages are handled strictly one after another so per-realm order survives retries.
    const crashed = (err: unknown) => this.log.error({ queue: spec.name, err: (err as Error).message }, "consumer crashed");
    let waiting: amqp.ConsumeMessage[] = [];
    const { consumerTag } = await ch.consume(queue, (msg) => {
      if (!msg) return;
      if (!spec.batchHandler) {
        run.chain = run.chain.then(() => this.handle(run, msg)).catch(crashed);
        return;
      }
      // Those that arrive while a batch is being handled wait for the next one, all together.
      waiting.push(msg);
      if (waiting.length > 1) return;
      run.chain = run.chain
        .then(() => {
          const batch = waiting;
          waiting = [];
          return this.handleBatch(run, batch);
        })
        .catch(crashed);
    });
    run.tag = consumerTag;
  }

  /**
   * Registers a listener (see ListenerSpec); it is declared again on every (re)connection.
   * Returns the name of its queue while connected (each declaration names a new one: the
   * previous connection's queue may outlive it at the broker for a while).
   */
  async listen(spec: ListenerSpec): Promise<string | undefined> {
    this.listeners.push(spec);
    if (this.conn) return this.setUpListener(spec);
    return undefined;
  }

  private async setUpListener(spec: ListenerSpec): Promise<string | undefined> {
    const conn = this.conn;
    if (!conn) return undefined;
    const ch = await conn.createChannel();
    ch.on("error", (err) => this.log.warn({ queue: spec.name, err: (err as Error).message }, "amqp listener channel error"));
    ch.on("close", () => {
      if (this.closing || this.conn !== conn) return;
      setTimeout(() => {
        if (this.closing || this.conn !== conn) return;
        this.setUpListener(spec).catch((err) => this.log.warn({ queue: spec.name, err: (err as Error).message }, "amqp listener re-declare failed"));
      }, this.opts.reconnectMs).unref();
    });
    await ch.assertExchange(this.exchange, "topic", { durable: true });
    const name = `${this.queuePrefix}${spec.name}.${this.host}-${randomBytes(4).toString("hex")}`;
    const { queue } = await ch.assertQueue(name, { exclusive: true, autoDelete: true, durable: false });
    for (const key of spec.bindings) await ch.bindQueue(queue, this.exchange, key);
    await ch.consume(
      queue,
      (msg) => {
        if (!msg) return;
        let items: unknown[];
        try {
          const body: unknown = JSON.parse(msg.content.toString("utf8"));
          items = msg.properties.contentType === ENVELOPES_CONTENT_TYPE && Array.isArray(body) ? body : [body];
        } catch (err) {
          this.log.warn({ queue: spec.name, routing_key: msg.fields.routingKey, err: (err as Error).message }, "listener message ignored");
          return;
        }
        for (const item of items) {
          try {
            spec.handler(DomainEnvelope.parse(item));
          } catch (err) {
            this.log.warn({ queue: spec.name, routing_key: msg.fields.routingKey, err: (err as Error).message }, "listener message ignored");
          }
        }
      },
      { noAck: true },
    );
    spec.onReady();
    return queue;
  }

  /**
   * The envelopes a message carries, in order: one, or a relay's run of them
   * (`ENVELOPES_CONTENT_TYPE`). A message that is not JSON or not envelopes is dead-lettered and
   * logged here, and so is each item of a run that is not an envelope (a copy of it alone goes to
   * the dead-letter queue); null when nothing is left to handle and the message is settled.
   */
  private unpack(run: ConsumerRun, msg: amqp.ConsumeMessage): DomainEnvelope[] | null {
    const text = msg.content.toString("utf8");
    const invalid = (err: unknown) => {
      this.log.error(
        { queue: run.spec.name, routing_key: msg.fields.routingKey, err: (err as Error).message, body: text.slice(0, 500) },
        "invalid message dead-lettered",
      );
      safely(() => run.ch.nack(msg, false, false));
      run.counts.deadLettered.inc();
      return null;
    };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return invalid(err);
    }
    if (msg.properties.contentType !== ENVELOPES_CONTENT_TYPE) {
      const one = DomainEnvelope.safeParse(body);
      return one.success ? [one.data] : invalid(one.error);
    }
    if (!Array.isArray(body) || body.length === 0) return invalid(new Error("expected a non-empty array of envelopes"));
    const envelopes: DomainEnvelope[] = [];
    for (const item of body) {
      const one = DomainEnvelope.safeParse(item);
      if (one.success) envelopes.push(one.data);
      else {
        this.log.error({ queue: run.spec.name, routing_key: msg.fields.routingKey, id: (item as { id?: unknown } | null)?.id, err: one.error.message }, "invalid message dead-lettered");
        run.counts.deadLettered.inc();
        this.deadLetterPart(run, msg, item, one.error.message);
      }
    }
    if (envelopes.length > 0) return envelopes;
    safely(() => run.ch.ack(msg)); // every item went to the dead-letter queue on its own
    return null;
  }

  /** A copy of one item of a run, alone on the dead-letter queue (the run's others are handled). */
  private deadLetterPart(run: ConsumerRun, msg: amqp.ConsumeMessage, item: unknown, reason: string): void {
    safely(() =>
      run.ch.sendToQueue(this.queuePrefix + run.spec.name + ".dead", Buffer.from(JSON.stringify(item)), {
        persistent: true,
        contentType: "application/json",
        headers: { "x-chat-dead-letter-reason": reason.slice(0, 500), "x-chat-routing-key": msg.fields.routingKey },
      }),
    );
  }

  private async handleBatch(run: ConsumerRun, msgs: amqp.ConsumeMessage[]): Promise<void> {
    if (!run.open || this.closing) return;
    const parsed: Array<[amqp.ConsumeMessage, DomainEnvelope[]]> = [];
    for (const msg of msgs) {
      const envelopes = this.unpack(run, msg);
      if (envelopes) parsed.push([msg, envelopes]);
    }
    if (parsed.length === 0) return;
    const all = parsed.flatMap(([, envelopes]) => envelopes);
    try {
      await run.spec.batchHandler!(all);
      // Every earlier delivery of this channel is acked or dead-lettered already.
      safely(() => run.ch.ack(parsed[parsed.length - 1][0], true));
      run.counts.handled.inc(all.length);
    } catch (err) {
      if (this.closing || !run.open) return; // the broker redelivers them after reconnecting
      this.log.warn({ queue: run.spec.name, messages: all.length, err: (err as Error).message }, "batch failed, handling its messages one by one");
      for (const [msg, envelopes] of parsed) {
        if (!(await this.handleEnvelopes(run, msg, envelopes))) return;
      }
    }
  }

  private async handle(run: ConsumerRun, msg: amqp.ConsumeMessage): Promise<void> {
    // Deliveries queued on a channel that has since closed are redelivered on the new one;
    // handling them here too would run them twice and out of order.
    if (!run.open || this.closing) return;
    const envelopes = this.unpack(run, msg);
    if (envelopes) await this.handleEnvelopes(run, msg, envelopes);
  }

  /**
   * Handles a message's envelopes one after another, then settles it. False when it stopped
   * because the client is closing or the channel closed (the broker redelivers the message).
   */
  private async handleEnvelopes(run: ConsumerRun, msg: amqp.ConsumeMessage, envelopes: DomainEnvelope[]): Promise<boolean> {
    const single = msg.properties.contentType !== ENVELOPES_CONTENT_TYPE;
    for (const envelope of envelopes) {
      const outcome = await this.handleOne(run, envelope);
      if (outcome === "abandoned") return false;
      if (outcome === "handled") continue;
      if (single) {
        safely(() => run.ch.nack(msg, false, false));
        return true;
      }
      this.deadLetterPart(run, msg, envelope, "the handler refused it");
    }
    safely(() => run.ch.ack(msg));
    return true;
  }

  /** Runs the handler, retrying with backoff until it succeeds or refuses the envelope for good. */
  private async handleOne(run: ConsumerRun, envelope: DomainEnvelope): Promise<"handled" | "invalid" | "abandoned"> {
    const { spec, counts } = run;
    let backoff = 100;
    for (;;) {
      try {
        await spec.handler(envelope);
        counts.handled.inc();
        return "handled";
      } catch (err) {
        if (isValidationError(err)) {
          this.log.error({ queue: spec.name, id: envelope.id, type: envelope.type, err: (err as Error).message }, "message dead-lettered");
          counts.deadLettered.inc();
          return "invalid";
        }
        if (this.closing || !run.open) return "abandoned"; // the broker redelivers it after reconnecting
        counts.retried.inc();
        this.log.warn({ queue: spec.name, id: envelope.id, err: (err as Error).message }, "handler failed, retrying");
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  /** Stops consuming, lets the message being handled finish (bounded), then closes the connection. */
  async close(opts: { graceMs?: number } = {}): Promise<void> {
    this.closing = true;
    this.unwatch?.();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const runs = [...this.runs];
    await Promise.all(runs.map((r) => (r.tag && r.open ? r.ch.cancel(r.tag).catch(() => {}) : undefined)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(runs.map((r) => r.chain)),
      new Promise((r) => {
        timer = setTimeout(r, opts.graceMs ?? 5000);
      }),
    ]);
    clearTimeout(timer);
    await this.connecting;
    // Closing each channel first flushes its acks: a connection close can overtake frames
    // still queued on a channel, and the broker would redeliver work already done.
    await Promise.all(runs.map((r) => (r.open ? r.ch.close().catch(() => {}) : undefined)));
    await this.conn?.close().catch(() => {});
    this.conn = null;
    this.confirm = null;
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // The channel closed under us; the broker redelivers the unacked message.
  }
}
