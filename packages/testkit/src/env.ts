import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import amqp from "amqplib";
import { Redis } from "ioredis";
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
  /**
   * Creates `schema` with only the platform's tables (outbox, processed_events) plus the
   * migrations in `dir`, if given: for tests of the platform itself or of a scratch schema.
   */
  migrateSchema(schema: string, dir?: string): Promise<string[]>;
  /**
   * Drops the database, deletes this run's Redis keys and its exchange. Queues carry
   * `x-expires` and disappear by themselves once unused.
   */
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

/** A directory with no migrations, so only the platform's own run. */
const NO_MIGRATIONS = path.join(REPO_ROOT, "packages", "testkit", "src", "no-migrations");

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
    async migrateSchema(schema, dir) {
      return runMigrations({ databaseUrl, schema, dir: dir && existsSync(dir) ? dir : NO_MIGRATIONS });
    },
    async cleanup() {
      await Promise.all([
        dropDatabase(databaseUrl, `chat_${id}`),
        deleteRedisKeys(infra.redisUrl, vars.REDIS_PREFIX),
        deleteExchange(infra.amqpUrl, vars.AMQP_EXCHANGE),
      ]);
    },
  };
}

async function dropDatabase(databaseUrl: string, name: string): Promise<void> {
  const admin = new URL(databaseUrl);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } catch {
    // Best effort: a leftover test database is harmless.
  } finally {
    await client.end().catch(() => {});
  }
}

async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on("error", () => {});
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== "0");
  } catch {
    // Best effort.
  } finally {
    redis.disconnect();
  }
}

async function deleteExchange(url: string, exchange: string): Promise<void> {
  try {
    const conn = await amqp.connect(url);
    conn.on("error", () => {});
    try {
      const ch = await conn.createChannel();
      ch.on("error", () => {});
      await ch.deleteExchange(exchange);
    } finally {
      await conn.close().catch(() => {});
    }
  } catch {
    // Best effort.
  }
}
