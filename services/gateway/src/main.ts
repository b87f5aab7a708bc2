import { AmqpClient, ConfigError, createLogger, createRedis, runService } from "@chat/platform";
import { buildApp } from "./app";
import { AuthCache } from "./auth/cache";
import { loadGatewayConfig, type GatewayConfig } from "./config";
import { consumeAccountsEvents } from "./consumers/accounts";

async function main(): Promise<void> {
  let config: GatewayConfig;
  try {
    config = loadGatewayConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger("gateway", config.LOG_LEVEL);
  const redis = createRedis(config.REDIS_URL, config.REDIS_PREFIX);
  const app = buildApp({ config, log, redis });

  const amqp = new AmqpClient(config.AMQP_URL, config.AMQP_EXCHANGE, config.AMQP_QUEUE_PREFIX, log, config.AMQP_QUEUE_EXPIRES_MS, {
    publishBatches: config.AMQP_PUBLISH_BATCHES,
  });
  await amqp.start();
  await consumeAccountsEvents(amqp, new AuthCache(redis, config.AUTH_CACHE_TTL_SECONDS, config.REDIS_PREFIX), log);

  await runService({
    app,
    host: config.HOST,
    port: config.PORT,
    log,
    graceSeconds: config.SHUTDOWN_GRACE_SECONDS,
    stop: [() => amqp.close(), async () => redis.quit()],
  });
  log.info({ port: config.PORT }, "gateway listening");
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
