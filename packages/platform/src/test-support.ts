/**
 * Helpers for the platform's own tests (not exported from the package): a direct RabbitMQ
 * connection that watches an exchange or publishes raw bytes, bypassing the code under test.
 */
import amqp from "amqplib";
import type { DomainEnvelope } from "@chat/contracts";

export interface Observer {
  /** Envelopes received so far, in arrival order. */
  received: DomainEnvelope[];
  waitFor(count: number, timeoutMs?: number): Promise<DomainEnvelope[]>;
  /** Re-binds after the exchange was deleted and recreated. */
  rebind(): Promise<void>;
  channel: amqp.Channel;
  close(): Promise<void>;
}

/** A temporary queue bound to `#` on `exchange`, collecting every message published there. */
export async function observeExchange(url: string, exchange: string): Promise<Observer> {
  const conn = await amqp.connect(url);
  conn.on("error", () => {});
  const ch = await conn.createChannel();
  ch.on("error", () => {});
  await ch.assertExchange(exchange, "topic", { durable: true });
  const { queue } = await ch.assertQueue("", { exclusive: true, autoDelete: true });
  await ch.bindQueue(queue, exchange, "#");
  const received: DomainEnvelope[] = [];
  await ch.consume(queue, (msg) => {
    if (!msg) return;
    received.push(JSON.parse(msg.content.toString("utf8")));
    ch.ack(msg);
  });
  return {
    received,
    channel: ch,
    async waitFor(count, timeoutMs = 10_000) {
      await until(() => received.length >= count, timeoutMs, () => `got ${received.length} of ${count} messages`);
      return received;
    },
    async rebind() {
      await ch.assertExchange(exchange, "topic", { durable: true });
      await ch.bindQueue(queue, exchange, "#");
    },
    async close() {
      await conn.close().catch(() => {});
    },
  };
}

/** A plain confirm channel for publishing test messages, valid or not. */
export async function rawPublisher(url: string, exchange: string) {
  const conn = await amqp.connect(url);
  conn.on("error", () => {});
  const ch = await conn.createConfirmChannel();
  ch.on("error", () => {});
  await ch.assertExchange(exchange, "topic", { durable: true });
  return {
    channel: ch,
    async publish(routingKey: string, body: unknown, options: amqp.Options.Publish = {}) {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
      ch.publish(exchange, routingKey, bytes, { persistent: true, ...options });
      await ch.waitForConfirms();
    },
    async close() {
      await conn.close().catch(() => {});
    },
  };
}

export async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000, what: () => string = () => "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
