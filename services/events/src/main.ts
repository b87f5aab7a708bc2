import { AmqpClient, ConfigError, createLogger, createRedis, runService } from "@chat/platform";
import { notifyRestartIfUpgraded } from "./actions/maintenance";
import { buildApp } from "./app";
import { loadEventsConfig } from "./config";
import { clientEventsConsumer } from "./consumers/client-events";

async function main() {
  let config;
  try {
    config = loadEventsConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger("events", config.LOG_LEVEL);
  // Keys are prefixed by the store itself (scripts build keys), so the client gets no keyPrefix.
  const redis = createRedis(config.REDIS_URL, "");
  const app = buildApp({ config, log, redis, subscriber: createRedis(config.REDIS_URL, "") });

  const amqp = new AmqpClient(config.AMQP_URL, config.AMQP_EXCHANGE, config.AMQP_QUEUE_PREFIX, log, config.AMQP_QUEUE_EXPIRES_MS, {
    publishBatches: config.AMQP_PUBLISH_BATCHES,
  });
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

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
