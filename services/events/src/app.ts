import type { FastifyInstance } from "fastify";
import { createServer, InternalClient, setRawRoute, setStreamRoute, systemClock, type Clock, type Logger, type Redis } from "@chat/platform";
import { Deliverer } from "./actions/fanout";
import { Sweeper } from "./actions/maintenance";
import type { EventsConfig } from "./config";
import { PaceHints } from "./lib/pace-hints";
import { PollHub } from "./lib/poll-hub";
import { eventRoutes } from "./routes/events";
import { heldPollRoute, heldPollStreamRoute } from "./routes/held-polls";
import type { EventsRuntime } from "./runtime";
import { QueueStore } from "./store/queues";

export interface AppDeps {
  config: EventsConfig;
  log: Logger;
  /** Commands (queues, fan-out). Owned by the caller, who closes it after the app. */
  redis: Redis;
  /** A second connection for pub/sub; the app closes it. Defaults to `redis.duplicate()`. */
  subscriber?: Redis;
  clock?: Clock;
}

declare module "fastify" {
  interface FastifyInstance {
    events: EventsRuntime & { deliverer: Deliverer; sweeper: Sweeper };
  }
}

/** The events service: routes, the poll hub, the deliverer and the sweeper. Never listens. */
export function buildApp(deps: AppDeps): FastifyInstance {
  const { config, log, redis } = deps;
  const clock = deps.clock ?? systemClock;
  const store = new QueueStore(redis, {
    prefix: config.REDIS_PREFIX,
    maxEvents: config.EVENTS_QUEUE_MAX_EVENTS,
    dedupeTtlSeconds: config.EVENTS_DEDUPE_TTL_SECONDS,
    pollMinIntervalMs: config.EVENTS_POLL_MIN_INTERVAL_MS,
  });
  const hub = new PollHub(deps.subscriber ?? redis.duplicate(), log);
  const rt: EventsRuntime = {
    config,
    log,
    clock,
    store,
    hub,
    paces: new PaceHints(config.EVENTS_POLL_MIN_INTERVAL_MS),
    stateClients: {
      accounts: new InternalClient(config.ACCOUNTS_URL, config.INTERNAL_TOKEN),
      messaging: new InternalClient(config.MESSAGING_URL, config.INTERNAL_TOKEN),
      scheduler: new InternalClient(config.SCHEDULER_URL, config.INTERNAL_TOKEN),
    },
    heartbeatMs: () => (config.EVENTS_HEARTBEAT_SECONDS + Math.random() * config.EVENTS_HEARTBEAT_JITTER_SECONDS) * 1000,
  };

  const app = createServer({
    name: "events",
    logger: log,
    internalToken: config.INTERNAL_TOKEN,
    validateResponses: config.VALIDATE_RESPONSES,
    readiness: { redis: () => redis.ping() },
    // The gateway sends its held polls as HTTP/2 streams, many to a connection.
    http2: true,
    gauges: {
      events_held_polls: { help: "Long polls this instance holds now", read: () => hub.held },
      events_queues: { help: "Event queues of the deployment (shared by every instance)", read: () => store.count() },
    },
  });
  app.decorate("events", {
    ...rt,
    deliverer: new Deliverer(store, log, clock),
    sweeper: new Sweeper(store, clock, log, config.EVENTS_SWEEP_INTERVAL_SECONDS * 1000),
  });
  // Shutdown: answer held polls with a heartbeat before the server waits for in-flight requests.
  app.addHook("preClose", async () => hub.releaseAll());
  app.addHook("onClose", async () => {
    await app.events.sweeper.stop();
    await hub.close();
  });
  eventRoutes(app, rt);
  setRawRoute(app, heldPollRoute(app, rt));
  setStreamRoute(app, heldPollStreamRoute(app, rt));
  return app;
}
