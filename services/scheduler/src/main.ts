import {
  AmqpClient,
  InternalClient,
  OutboxRelay,
  createLogger,
  createPool,
  migrateAtStart,
  runMain,
  runService,
  systemClock,
} from "@chat/platform";
import { fileURLToPath } from "node:url";
import { buildApp } from "./app";
import { AccountsClient, MessagingClient } from "./clients/services";
import { loadSchedulerConfig } from "./config";
import type { SchedulerDeps } from "./deps";
import { DeliveryLoop } from "./workers/delivery-loop";
import { UploadCleanup } from "./workers/upload-cleanup";

const SCHEMA = "scheduler";

async function main(): Promise<void> {
  const config = loadSchedulerConfig();
  const log = createLogger("scheduler", config.LOG_LEVEL);
  await migrateAtStart({ databaseUrl: config.DATABASE_URL, schema: SCHEMA, dir: fileURLToPath(new URL("../migrations", import.meta.url)), log });
  const pool = createPool(config.DATABASE_URL, SCHEMA, config.DATABASE_POOL_SIZE);
  const deps: SchedulerDeps = {
    pool,
    clock: systemClock,
    messaging: new MessagingClient(new InternalClient(config.MESSAGING_URL, config.INTERNAL_TOKEN)),
    accounts: new AccountsClient(new InternalClient(config.ACCOUNTS_URL, config.INTERNAL_TOKEN)),
    log,
  };
  const amqp = AmqpClient.fromConfig(config, log);
  await amqp.start();
  const app = buildApp({
    config,
    deps,
    readiness: {
      rabbitmq: async () => {
        if (!amqp.connected) throw new Error("RabbitMQ is not connected");
      },
    },
  });
  const relay = new OutboxRelay({ pool, schema: SCHEMA, amqp, log, lingerMs: config.OUTBOX_LINGER_MS });
  const delivery = new DeliveryLoop(deps, { intervalMs: config.DELIVERY_INTERVAL_MS, concurrency: config.DELIVERY_CONCURRENCY });
  const cleanup = new UploadCleanup(deps, {
    intervalMs: config.UPLOAD_CLEANUP_INTERVAL_MS,
    retentionDays: config.UNCLAIMED_UPLOAD_RETENTION_DAYS,
  });
  await runService({
    app,
    host: config.HOST,
    port: config.PORT,
    log,
    graceSeconds: config.SHUTDOWN_GRACE_SECONDS,
    stop: [() => delivery.stop(), () => cleanup.stop(), () => relay.stop(), () => amqp.close(), () => pool.end()],
  });
  relay.start();
  delivery.start();
  cleanup.start();
  log.info({ port: config.PORT }, "scheduler listening");
}

runMain(main);
