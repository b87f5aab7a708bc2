import { AmqpClient, createLogger, createRedis, runMain, runService } from "@chat/platform";
import { buildApp } from "./app";
import { AuthCache } from "./auth/cache";
import { loadGatewayConfig } from "./config";
import { consumeAccountsEvents } from "./consumers/accounts";

async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const log = createLogger("gateway", config.LOG_LEVEL);
  const redis = createRedis(config.REDIS_URL, config.REDIS_PREFIX);
  const app = buildApp({ config, log, redis });

  const amqp = AmqpClient.fromConfig(config, log);
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

runMain(main);
