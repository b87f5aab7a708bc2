import amqp from "amqplib";
import { DomainEnvelope } from "@chat/contracts";
import type { Logger } from "./logger";

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
   * `InvalidMessageError` dead-letters it; any other error is retried with backoff, in place.
   */
  handler: (envelope: DomainEnvelope) => Promise<void>;
}

/** A message that can never be handled: dead-lettered and logged, never retried. */
export class InvalidMessageError extends Error {}

interface PublishItem {
  routingKey: string;
  envelope: DomainEnvelope;
}

/**
 * One RabbitMQ connection per process that reconnects by itself: publishers get an error while it
 * is down (the outbox keeps the events); consumers are declared again when it comes back.
 */
export class AmqpClient {
  private conn: amqp.ChannelModel | null = null;
  private confirm: amqp.ConfirmChannel | null = null;
  private consumers: ConsumerSpec[] = [];
  private consumerChannels: amqp.Channel[] = [];
  private closing = false;
  private connecting: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly exchange: string,
    private readonly queuePrefix: string,
    private readonly log: Logger,
    private readonly queueExpiresMs?: number,
  ) {}

  get connected(): boolean {
    return this.conn !== null && this.confirm !== null;
  }

  /** Connects (retrying in the background if the broker is down); resolves after the first attempt. */
  async start(): Promise<void> {
    await this.connect();
  }

  private connect(): Promise<void> {
    if (this.connecting) return this.connecting;
    this.connecting = (async () => {
      try {
        const conn = await amqp.connect(this.url, { clientProperties: { connection_name: this.queuePrefix + "service" } });
        conn.on("error", (err) => this.log.warn({ err: err.message }, "amqp connection error"));
        conn.on("close", () => this.onClose());
        const confirm = await conn.createConfirmChannel();
        confirm.on("error", () => {});
        await confirm.assertExchange(this.exchange, "topic", { durable: true });
        this.conn = conn;
        this.confirm = confirm;
        this.consumerChannels = [];
        for (const spec of this.consumers) await this.setUpConsumer(spec);
        this.log.info("amqp connected");
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, "amqp connect failed, retrying");
        await this.conn?.close().catch(() => {});
        this.conn = null;
        this.confirm = null;
        this.scheduleRetry();
      } finally {
        this.connecting = null;
      }
    })();
    return this.connecting;
  }

  private onClose(): void {
    this.conn = null;
    this.confirm = null;
    this.consumerChannels = [];
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
    }, 1000);
  }

  /** Publishes persistent messages and waits until the broker confirms every one. */
  async publishConfirmed(items: PublishItem[]): Promise<void> {
    const ch = this.confirm;
    if (!ch) throw new Error("RabbitMQ is not connected");
    for (const item of items) {
      ch.publish(this.exchange, item.routingKey, Buffer.from(JSON.stringify(item.envelope)), {
        persistent: true,
        messageId: item.envelope.id,
        contentType: "application/json",
        type: item.envelope.type,
      });
    }
    await ch.waitForConfirms();
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
    ch.on("error", () => {});
    this.consumerChannels.push(ch);
    await ch.assertExchange(this.exchange, "topic", { durable: true });
    const expiry: Record<string, unknown> = this.queueExpiresMs ? { "x-expires": this.queueExpiresMs } : {};
    await ch.assertQueue(dead, { durable: true, arguments: expiry });
    const args: Record<string, unknown> = { ...expiry, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dead };
    if (spec.singleActiveConsumer) args["x-single-active-consumer"] = true;
    await ch.assertQueue(queue, { durable: true, arguments: args });
    for (const key of spec.bindings) await ch.bindQueue(queue, this.exchange, key);
    await ch.prefetch(spec.prefetch ?? 50);

    // Messages are handled strictly one after another so per-realm order survives retries.
    let chain = Promise.resolve();
    await ch.consume(queue, (msg) => {
      if (!msg) return;
      chain = chain.then(() => this.handle(ch, spec, msg));
    });
  }

  private async handle(ch: amqp.Channel, spec: ConsumerSpec, msg: amqp.ConsumeMessage): Promise<void> {
    let envelope: DomainEnvelope;
    try {
      envelope = DomainEnvelope.parse(JSON.parse(msg.content.toString("utf8")));
    } catch (err) {
      this.log.error({ queue: spec.name, err: (err as Error).message }, "invalid message dead-lettered");
      safely(() => ch.nack(msg, false, false));
      return;
    }
    let backoff = 100;
    for (;;) {
      try {
        await spec.handler(envelope);
        safely(() => ch.ack(msg));
        return;
      } catch (err) {
        if (err instanceof InvalidMessageError) {
          this.log.error({ queue: spec.name, id: envelope.id, type: envelope.type, err: err.message }, "message dead-lettered");
          safely(() => ch.nack(msg, false, false));
          return;
        }
        if (this.closing || !this.consumerChannels.includes(ch)) return; // redelivered after reconnect
        this.log.warn({ queue: spec.name, id: envelope.id, err: (err as Error).message }, "handler failed, retrying");
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
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
