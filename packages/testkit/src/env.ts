import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { ensureDatabase, runMigrations } from "@chat/platform";
import type { InfraUrls } from "./infra";

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export type ServiceWithSchema = "accounts" | "messaging" | "scheduler" | "events";

/** Environment variables for one isolated test run: its own database, Redis prefix, exchange. */
export interface TestEnv {
  id: string;
  vars: Record<string, string>;
  databaseUrl: string;
  /** Runs the given services' migrations into this run's database. */
  migrate(...services: ServiceWithSchema[]): Promise<void>;
  /** Drops the database. Redis keys and RabbitMQ queues expire by themselves. */
  cleanup(): Promise<void>;
}

function infraFromEnv(): InfraUrls {
  return {
    databaseUrl: process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    amqpUrl: process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672",
  };
}

export function migrationsDir(service: ServiceWithSchema): string {
  return path.join(REPO_ROOT, "services", service, "migrations");
}

export async function createTestEnv(): Promise<TestEnv> {
  const infra = infraFromEnv();
  const id = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const dbUrl = new URL(infra.databaseUrl);
  dbUrl.pathname = `/chat_${id}`;
  const databaseUrl = dbUrl.toString();
  await ensureDatabase(databaseUrl);
  const vars: Record<string, string> = {
    NODE_ENV: "test",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    DATABASE_URL: databaseUrl,
    REDIS_URL: infra.redisUrl,
    REDIS_PREFIX: `${id}:`,
    AMQP_URL: infra.amqpUrl,
    AMQP_EXCHANGE: `chat.domain.${id}`,
    AMQP_QUEUE_PREFIX: `${id}.`,
    AMQP_QUEUE_EXPIRES_MS: "120000",
    INTERNAL_TOKEN: `test-internal-token-${id}`,
    VALIDATE_RESPONSES: "true",
  };
  return {
    id,
    vars,
    databaseUrl,
    async migrate(...services) {
      for (const s of services) {
        await runMigrations({ databaseUrl, schema: s, dir: migrationsDir(s) });
      }
    },
    async cleanup() {
      const admin = new URL(databaseUrl);
      admin.pathname = "/postgres";
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "chat_${id}" WITH (FORCE)`).catch(() => {});
      await client.end();
    },
  };
}
