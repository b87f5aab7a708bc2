import { constants as zlib } from "node:zlib";
import fastifyCompress from "@fastify/compress";
import type { FastifyInstance } from "fastify";
import { buildOpenApi, publicRoutes, type RouteDef } from "@chat/contracts";
import { createServer, InternalClient, systemClock, type Clock, type Logger, type Redis } from "@chat/platform";
import { Authenticator } from "./auth/authenticate";
import { AuthCache } from "./auth/cache";
import type { GatewayConfig } from "./config";
import { Gate } from "./gate";
import { UpstreamProxy } from "./proxy";
import { RateLimiter } from "./rate-limit";
import { Router } from "./router";
import { apiRoutes } from "./routes/api";
import { staticRoutes } from "./routes/static";

export interface GatewayDeps {
  config: GatewayConfig;
  log: Logger;
  redis: Redis;
  clock?: Clock;
  /** The public route table; tests pass their own, production uses the contracts'. */
  routes?: readonly RouteDef[];
}

/** Builds the gateway's fastify app (never listens). Closing it releases upstream connections. */
export function buildApp(deps: GatewayDeps): FastifyInstance {
  const { config, log, redis } = deps;
  const clock = deps.clock ?? systemClock;
  const accounts = new InternalClient(config.ACCOUNTS_URL, config.INTERNAL_TOKEN);
  // A second connection hears the cache's invalidations (in-process copies; see AuthCache).
  const subscriber = config.AUTH_CACHE_TTL_SECONDS > 0 ? redis.duplicate() : null;
  // Connection trouble shows as the subscriber not being ready (copies unused); not a crash.
  subscriber?.on("error", () => {});
  const authCache = new AuthCache(redis, config.AUTH_CACHE_TTL_SECONDS, config.REDIS_PREFIX, subscriber);
  const proxy = new UpstreamProxy(
    {
      timeoutMs: config.UPSTREAM_TIMEOUT_SECONDS * 1000,
      connectTimeoutMs: config.UPSTREAM_CONNECT_TIMEOUT_MS,
      longPollConnections: config.EVENTS_HTTP2_CONNECTIONS,
      longPollConnectionMaxAgeMs: config.EVENTS_HTTP2_MAX_AGE_SECONDS * 1000,
    },
    log,
  );
  const gate = new Gate({
    config,
    authenticator: new Authenticator(accounts, authCache, log),
    limiter: new RateLimiter(redis, clock),
    clock,
    log,
  });

  const routes = deps.routes ?? publicRoutes;
  const app = createServer({
    name: "gateway",
    logger: log,
    internalToken: config.INTERNAL_TOKEN,
    validateResponses: config.VALIDATE_RESPONSES,
    // The gateway's own refusals of a page (a wrong method, a rate limit) are pages too.
    pageRoutes: routes,
    readiness: {
      redis: () => redis.ping(),
      accounts: () => fetchOk(`${config.ACCOUNTS_URL}/health`),
    },
    gauges: {
      gateway_held_polls: { help: "Long polls this gateway holds now, waiting for the events service", read: () => proxy.heldPollCount },
      gateway_events_http2_connections: {
        help: "Open HTTP/2 connections to the events service carrying held polls (0 while polls go over HTTP/1.1)",
        read: () => proxy.pollConnectionCount,
      },
    },
  });
  // For the API routes only, which pass these settings (a route's own settings replace the
  // plugin's, defaults included), and never for request bodies: those reach the services as
  // they came.
  const compression = {
    threshold: config.COMPRESS_MIN_BYTES,
    customTypes: /^application\/json\b/,
    encodings: ["br", "gzip", "deflate"] as Array<"br" | "gzip" | "deflate">,
    // Fast settings: brotli's default quality (11) costs a register's state tens of milliseconds.
    brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } },
    zlibOptions: { level: 5 },
  };
  app.register(fastifyCompress, { global: false, ...compression });
  // The API description, generated from the same route table the gateway routes by.
  const openapi = buildOpenApi(routes);
  app.get("/api/v1/openapi.json", async () => openapi);
  app.register(staticRoutes, { compress: config.COMPRESS_RESPONSES ? compression : false });
  app.register(apiRoutes, {
    router: new Router(routes),
    gate,
    proxy,
    internalToken: config.INTERNAL_TOKEN,
    hosts: config,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    compress: config.COMPRESS_RESPONSES ? compression : false,
    upstreams: {
      accounts: config.ACCOUNTS_URL,
      messaging: config.MESSAGING_URL,
      events: config.EVENTS_URL,
      scheduler: config.SCHEDULER_URL,
    },
  });
  app.addHook("preClose", async () => proxy.releaseLongPolls());
  app.addHook("onClose", async () => {
    // Its "close" event drops the cache's in-process copies.
    subscriber?.disconnect();
    await proxy.close();
  });
  return app;
}

async function fetchOk(url: string): Promise<void> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1500) });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
}
