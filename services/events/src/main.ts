import { AmqpClient, createLogger, createRedis, runMain, runService } from "@chat/platform";
import { notifyRestartIfUpgraded } from "./actions/maintenance";
import { buildApp } from "./app";
import { loadEventsConfig } from "./config";
import { clientEventsConsumer } from "./consumers/client-events";

async function main() {
  const config = loadEventsConfig();
  const log = createLogger("events", config.LOG_LEVEL);
  // Keys are prefixed by the store itself (scripts build keys), so the client gets no keyPrefix.
  const redis = createRedis(config.REDIS_URL, "");
  const app = buildApp({ config, log, redis, subscriber: createRedis(config.REDIS_URL, "") });

  const amqp = AmqpClient.fromConfig(config, log);
  await runService({
    app,
    host: config.HOST,
    port: config.PORT,
    log,
    graceSeconds: config.SHUTDOWN_GRACE_SECONDS,
    stop: [() => amqp.close(), async () => redis.quit()],
  });
  await notifyRestartIfUpgraded(app.events.store, app.events.clock, log).catch((err) =>
    log.warn({ err: (err as Error).message }, "could not check for an upgrade"),
  );
  await amqp.consume(clientEventsConsumer(app.events));
  await amqp.start();
  app.events.sweeper.start();
}

runMain(main);
