import { fileURLToPath } from "node:url";
import { AmqpClient, createLogger, createPool, MailSender, OutboxRelay, migrateAtStart, runMain, runService, systemClock } from "@chat/platform";
import { buildApp } from "./app";
import { loadAccountsConfig } from "./config";
import type { AccountsDeps } from "./deps";
import { MessagingClient } from "./lib/messaging-client";
import { doCleanupExpiredInvites } from "./actions/invites";
import { doPromoteNewFullMembers } from "./actions/system-groups";
import { consumeChannelDeletions } from "./consumers/channels";
import { consumeInviteAccepted } from "./consumers/invites";
import { consumeUserJoined } from "./consumers/new-users";
import { consumeRealmEmoji } from "./consumers/realm-emoji";
import { consumeUserAccessChanges } from "./consumers/user-access";

const MIGRATIONS_DIR = fileURLToPath(new URL("../migrations", import.meta.url));

async function main(): Promise<void> {
  const config = loadAccountsConfig();
  const log = createLogger("accounts", config.LOG_LEVEL);
  await migrateAtStart({ databaseUrl: config.DATABASE_URL, schema: "accounts", dir: MIGRATIONS_DIR, log });
  const pool = createPool(config.DATABASE_URL, "accounts", config.DATABASE_POOL_SIZE);
  const amqp = AmqpClient.fromConfig(config, log);
  const deps: AccountsDeps = { pool, config, clock: systemClock, log, messaging: new MessagingClient(config.MESSAGING_URL, config.INTERNAL_TOKEN) };
  const app = buildApp(deps, { readiness: { rabbitmq: async () => { if (!amqp.connected) throw new Error("not connected"); } } });

  await amqp.start();
  const relay = new OutboxRelay({ pool, schema: "accounts", amqp, log, lingerMs: config.OUTBOX_LINGER_MS });
  relay.start();
  const mail = new MailSender({ pool, config, log, clock: systemClock });
  mail.start();
  await consumeInviteAccepted(amqp, deps);
  await consumeRealmEmoji(amqp, deps);
  await consumeUserJoined(amqp, deps);
  await consumeChannelDeletions(amqp, deps);
  await consumeUserAccessChanges(amqp, deps);
  // Expired invitations cannot be used; this removes them (hourly, idempotent across replicas).
  const cleanup = setInterval(() => void doCleanupExpiredInvites(deps).catch((err) => log.warn({ err }, "invite clean-up failed")), 3_600_000);
  cleanup.unref();
  // Members past the waiting period join role:fullmembers (Zulip runs this daily; here at start,
  // so restarts do not keep postponing it, and hourly; idempotent across replicas).
  const promoteFullMembers = () => void doPromoteNewFullMembers(deps).catch((err) => log.warn({ err }, "full-member promotion failed"));
  promoteFullMembers();
  setInterval(promoteFullMembers, 3_600_000).unref();

  await runService({
    app,
    host: config.HOST,
    port: config.PORT,
    log,
    graceSeconds: config.SHUTDOWN_GRACE_SECONDS,
    stop: [() => mail.stop(), () => relay.stop(), () => amqp.close(), () => pool.end()],
  });
  log.info({ port: config.PORT }, "accounts listening");
}

runMain(main);
