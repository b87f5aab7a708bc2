import { fileURLToPath } from "node:url";
import { AmqpClient, createLogger, MailSender, OutboxRelay, migrateAtStart, runMain, runService } from "@chat/platform";
import { attachmentHooks } from "./actions/attachments";
import { buildApp, createDeps, ROUTE_PLUGINS } from "./app";
import { loadMessagingConfig } from "./config";
import { consumeAccountsEvents } from "./consumers/accounts";
import { consumeAlertWords } from "./consumers/alert-words";
import { consumeMutedUsers } from "./consumers/muted-users";
import { listenForRealmChanges } from "./consumers/realm-cache";
import { startHighlighting } from "./lib/highlight-thread";
import { consumeUserSettings } from "./consumers/user-settings";
import { loadDigestEmailConfig, startDigestEmailJob } from "./jobs/digest-emails";
import { loadMissedMessageEmailConfig, startMissedMessageEmailJob } from "./jobs/missed-message-emails";
import { loadOutgoingWebhookConfig, startOutgoingWebhookJob } from "./jobs/outgoing-webhooks";
import { loadRealmExportConfig, startRealmExportJob, type RealmExportJob } from "./jobs/realm-exports";
import { loadRetentionConfig, startRetentionJob } from "./jobs/retention";
import { attachmentRoutes, createAttachmentsModule } from "./routes/attachments";
import { realmEmojiRoutes } from "./routes/realm-emoji";
import { realmExportRoutes } from "./routes/realm-exports";

const MIGRATIONS_DIR = fileURLToPath(new URL("../migrations", import.meta.url));

async function main(): Promise<void> {
  const config = loadMessagingConfig();
  const log = createLogger("messaging", config.LOG_LEVEL);
  await migrateAtStart({ databaseUrl: config.DATABASE_URL, schema: "messaging", dir: MIGRATIONS_DIR, log });
  const deps = createDeps(config, log);
  // Uploads: storage from UPLOADS_DIR / S3_*; sends claim them, deletions release them.
  const attachments = await createAttachmentsModule(deps);
  deps.hooks = attachmentHooks(attachments.reaper);
  const amqp = AmqpClient.fromConfig(config, log);
  // Started once the process serves; until then a new export waits for the job's first look.
  let exportJob: RealmExportJob | null = null;
  const app = buildApp(deps, {
    // Custom emoji images and data exports live in the uploads' storage.
    plugins: [
      ...ROUTE_PLUGINS,
      attachmentRoutes(attachments),
      realmEmojiRoutes(attachments.storage),
      realmExportRoutes(attachments.storage, { kick: () => exportJob?.kick() }),
    ],
    readiness: {
      storage: () => attachments.storage.check(),
      rabbitmq: async () => {
        if (!amqp.connected) throw new Error("not connected");
      },
    },
  });
  await amqp.start();
  const relay = new OutboxRelay({ pool: deps.pool, schema: "messaging", amqp, log, lingerMs: config.OUTBOX_LINGER_MS });
  relay.start();
  await consumeAccountsEvents(amqp, deps);
  await consumeAlertWords(amqp, deps);
  await consumeMutedUsers(amqp, deps);
  await consumeUserSettings(amqp, deps);
  await listenForRealmChanges(amqp, deps);
  const retention = startRetentionJob(deps, loadRetentionConfig());
  exportJob = startRealmExportJob(deps, attachments.storage, loadRealmExportConfig());
  const outgoingWebhooks = startOutgoingWebhookJob(deps, loadOutgoingWebhookConfig());
  const mail = new MailSender({ pool: deps.pool, config, log, clock: deps.clock });
  mail.start();
  const missedMessageEmails = startMissedMessageEmailJob(deps, loadMissedMessageEmailConfig());
  const digestEmails = startDigestEmailJob(deps, loadDigestEmailConfig());
  startHighlighting();

  await runService({
    app,
    host: config.HOST,
    port: config.PORT,
    log,
    graceSeconds: config.SHUTDOWN_GRACE_SECONDS,
    stop: [
      () => retention.stop(),
      async () => exportJob?.stop(),
      () => outgoingWebhooks.stop(),
      () => missedMessageEmails.stop(),
      () => digestEmails.stop(),
      () => mail.stop(),
      async () => attachments.reaper.stop(),
      () => relay.stop(),
      () => amqp.close(),
      () => deps.pool.end(),
    ],
  });
  log.info({ port: config.PORT }, "messaging listening");
}

runMain(main);
