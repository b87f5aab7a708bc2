import { randomUUID } from "node:crypto";
import type { DomainEnvelope } from "@chat/contracts";
import { AmqpClient, createLogger, createRedis, type Clock, type Identity, type Redis } from "@chat/platform";
import { createTestEnv, httpServiceClient, serviceClient, type TestEnv } from "@chat/testkit";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../src/app";
import { loadEventsConfig, type EventsConfig } from "../src/config";
import { clientEventsConsumer } from "../src/consumers/client-events";

/**
 * Events instances in-process against real Redis and RabbitMQ, sharing one isolated TestEnv:
 * the same Redis prefix and exchange, so several instances behave like replicas.
 */

const log = createLogger("events-test", process.env.TEST_LOG_LEVEL ?? "silent");

export interface Instance {
  app: FastifyInstance;
  config: EventsConfig;
  /** Where the instance listens. */
  url: string;
  /** Over HTTP to the listening instance, as the gateway calls it. */
  call: ReturnType<typeof serviceClient>;
  /** In-process (fastify's inject): straight to fastify's routes, past the server's raw route. */
  inject: ReturnType<typeof serviceClient>;
  /** Stops consuming, closes the app (held polls get heartbeats) and its connections. */
  close(): Promise<void>;
}

export interface EventsEnv {
  env: TestEnv;
  vars: Record<string, string>;
  /** A publisher of fake domain events on the run's exchange. */
  publish(type: string, realmId: number, payload: Record<string, unknown>, id?: string): Promise<DomainEnvelope>;
  start(opts?: { env?: Record<string, string>; clock?: Clock; consume?: boolean }): Promise<Instance>;
  /** A raw Redis client (no prefix) for inspecting keys. */
  redis: Redis;
  teardown(): Promise<void>;
}

export async function eventsEnv(shared: Record<string, string> = {}): Promise<EventsEnv> {
  const env = await createTestEnv();
  const vars = {
    ...env.vars,
    // Long enough that a busy machine never mistakes a slow delivery for a heartbeat; tests
    // about heartbeats start their instance with a shorter one.
    EVENTS_HEARTBEAT_SECONDS: "5",
    EVENTS_HEARTBEAT_JITTER_SECONDS: "0",
    // Register state comes from services that are not running here: refuse fast.
    ACCOUNTS_URL: "http://127.0.0.1:9",
    MESSAGING_URL: "http://127.0.0.1:9",
    SCHEDULER_URL: "http://127.0.0.1:9",
    ...shared,
  };
  const base = loadEventsConfig(vars);
  const publisher = new AmqpClient(base.AMQP_URL, base.AMQP_EXCHANGE, base.AMQP_QUEUE_PREFIX, log, base.AMQP_QUEUE_EXPIRES_MS);
  await publisher.start();
  const redis = createRedis(base.REDIS_URL, "");
  const instances: Instance[] = [];

  return {
    env,
    vars,
    redis,
    async publish(type, realmId, payload, id = randomUUID()) {
      const envelope: DomainEnvelope = { id, type, version: 1, occurred_at: new Date().toISOString(), realm_id: realmId, payload };
      await publisher.publishConfirmed([{ routingKey: type, envelope }]);
      return envelope;
    },
    async start(opts = {}) {
      const config = loadEventsConfig({ ...vars, ...opts.env });
      const commands = createRedis(config.REDIS_URL, "");
      const app = buildApp({ config, log, redis: commands, subscriber: createRedis(config.REDIS_URL, ""), clock: opts.clock });
      const address = await app.listen({ host: "127.0.0.1", port: 0 });
      const amqp = new AmqpClient(config.AMQP_URL, config.AMQP_EXCHANGE, config.AMQP_QUEUE_PREFIX, log, config.AMQP_QUEUE_EXPIRES_MS);
      if (opts.consume !== false) {
        await amqp.consume(clientEventsConsumer(app.events));
        await amqp.start();
      }
      let closed = false;
      const instance: Instance = {
        app,
        config,
        url: address,
        call: httpServiceClient(address, config.INTERNAL_TOKEN),
        inject: serviceClient(app, config.INTERNAL_TOKEN),
        async close() {
          if (closed) return;
          closed = true;
          await amqp.close();
          await app.close();
          commands.disconnect();
        },
      };
      instances.push(instance);
      return instance;
    },
    async teardown() {
      for (const i of instances) await i.close().catch(() => {});
      await publisher.close();
      const keys = await redis.keys(`${base.REDIS_PREFIX}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
      await env.cleanup();
    },
  };
}

let nextUser = 1000;

/** A caller identity; realm 1 unless given. */
export function user(opts: Partial<Identity> = {}): Identity {
  const userId = opts.userId ?? nextUser++;
  return { userId, realmId: 1, role: 400, isBot: false, email: `user${userId}@example.com`, client: "test", ...opts };
}

/** Registers a queue without initial state (GET /events with dont_block, no queue_id). */
export async function queueFor(inst: Instance, who: Identity, params: Record<string, unknown> = {}): Promise<string> {
  const res = await inst.call("GET", "/events", { as: who, params: { dont_block: true, ...params } });
  if (res.status !== 200) throw new Error(`could not register: ${JSON.stringify(res.body)}`);
  return res.body.queue_id;
}

/** A blocking poll: resolves when events arrive (or with the heartbeat). */
export function poll(inst: Instance, who: Identity, queueId: string, lastEventId?: number, extra: Record<string, unknown> = {}) {
  return inst.call("GET", "/events", { as: who, params: { queue_id: queueId, last_event_id: lastEventId, ...extra } });
}

/** Polls until at least `count` non-heartbeat events arrived; returns them (acknowledging heartbeats). */
export async function collect(inst: Instance, who: Identity, queueId: string, count: number, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  const got: any[] = [];
  let last: number | undefined;
  while (got.length < count) {
    if (Date.now() > deadline) throw new Error(`only ${got.length} of ${count} events arrived: ${JSON.stringify(got)}`);
    const res = await poll(inst, who, queueId, last);
    if (res.status !== 200) throw new Error(`poll failed: ${JSON.stringify(res.body)}`);
    for (const e of res.body.events) {
      last = e.id;
      if (e.type !== "heartbeat") got.push(e);
    }
  }
  return { events: got, lastEventId: last };
}

/** A client notice payload for a fake domain event. */
export function notice(event: Record<string, unknown>, users: unknown[], extra: Record<string, unknown> = {}) {
  return { client: { event, users, ...extra } };
}
