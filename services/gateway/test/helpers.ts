import http from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { expect } from "vitest";
import type { FastifyInstance } from "fastify";
import { AmqpClient, createLogger, createRedis, type Clock, type Redis } from "@chat/platform";
import type { RouteDef } from "@chat/contracts";
import { buildApp } from "../src/app";
import { AuthCache } from "../src/auth/cache";
import { loadGatewayConfig, type GatewayConfig } from "../src/config";
import { consumeAccountsEvents } from "../src/consumers/accounts";

/** A tiny HTTP server standing in for another service; `handle` decides each answer. */
export interface FakeService {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

export type FakeHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export async function startFake(handle: FakeHandler): Promise<FakeService> {
  const server = http.createServer((req, res) => {
    Promise.resolve(handle(req, res)).catch((err) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A URL nothing listens on: a service that is down. */
export async function deadUrl(): Promise<string> {
  const fake = await startFake(() => {});
  const url = fake.url;
  await fake.close();
  return url;
}

export interface RunningGateway {
  url: string;
  app: FastifyInstance;
  redis: Redis;
  config: GatewayConfig;
  close(): Promise<void>;
}

/** Starts the gateway in-process on a real port (streaming needs real sockets). */
export async function startGateway(opts: {
  vars: Record<string, string>;
  overrides?: Record<string, string>;
  routes?: readonly RouteDef[];
  clock?: Clock;
  /** REDIS_URL points nowhere: do not wait for the connection. */
  redisDown?: boolean;
}): Promise<RunningGateway> {
  const config = loadGatewayConfig({ ...opts.vars, ...opts.overrides });
  const log = createLogger("gateway", config.LOG_LEVEL);
  const redis = createRedis(config.REDIS_URL, config.REDIS_PREFIX);
  if (!opts.redisDown) await redis.ping();
  const app = buildApp({ config, log, redis, clock: opts.clock, routes: opts.routes });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    redis,
    config,
    close: async () => {
      await app.close();
      redis.disconnect();
    },
  };
}

/** The gateway's consumer of accounts' events, as main.ts starts it. */
export async function startAuthCacheConsumer(config: GatewayConfig, redis: Redis): Promise<AmqpClient> {
  const log = createLogger("gateway", config.LOG_LEVEL);
  const amqp = new AmqpClient(config.AMQP_URL, config.AMQP_EXCHANGE, config.AMQP_QUEUE_PREFIX, log, config.AMQP_QUEUE_EXPIRES_MS);
  await amqp.start();
  await consumeAccountsEvents(amqp, new AuthCache(redis, config.AUTH_CACHE_TTL_SECONDS, config.REDIS_PREFIX), log);
  return amqp;
}

export interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export async function call(
  base: string,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string } = {},
): Promise<Res> {
  const res = await request(base + path, { method: method as "GET", headers: opts.headers, body: opts.body });
  const text = await res.body.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body, text };
}

export const basic = (email: string, key: string) => "Basic " + Buffer.from(`${email}:${key}`).toString("base64");

/** Polls until `check` passes or `ms` elapse (for effects that travel through RabbitMQ). */
export async function eventually(check: () => Promise<boolean>, ms = 1000, stepMs = 25): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Closing `gateway` answers its held poll (`answer`) with a 503 at once instead of waiting for it. */
export async function expectShutdownReleases(gateway: RunningGateway, answer: Promise<{ status: number; body: any }>): Promise<void> {
  const start = Date.now();
  await gateway.close();
  expect(Date.now() - start).toBeLessThan(2000);
  const res = await answer;
  expect(res.status).toBe(503);
  expect(res.body.code).toBe("SERVICE_UNAVAILABLE");
}
