import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import amqp from "amqplib";
import { Redis } from "ioredis";
import pg from "pg";
import { ensureDatabase, PLATFORM_MIGRATIONS_DIR, runMigrations } from "@chat/platform";
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
  let migratedBefore = false;
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
      // The first call on the still-empty database copies a migrated template (a fraction of
      // the time); later calls add schemas to a database in use, so they migrate as usual.
      const first = !migratedBefore;
      migratedBefore = true;
      if (first && services.length && (await cloneFromTemplate(databaseUrl, `chat_${id}`, services))) return;
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

// ---------------------------------------------------------------------------------------------
// Migrated template databases: running node-pg-migrate for every test file costs seconds of CPU,
// while `CREATE DATABASE ... TEMPLATE` copies an already migrated one. A template's name carries
// a hash of the migration files it was built from, so a changed migration builds a new one.

const TEMPLATE_PREFIX = "chat_tpl_";
const ALL_SCHEMA_SERVICES: ServiceWithSchema[] = ["accounts", "messaging", "scheduler", "events"];

function adminUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = "/postgres";
  return url.toString();
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The template for this set of services: `chat_tpl_<hash of every migration file involved>`. */
export function templateName(services: readonly ServiceWithSchema[]): string {
  const hash = createHash("sha256");
  const wanted = [...new Set(services)].sort();
  for (const [label, dir] of [["platform", PLATFORM_MIGRATIONS_DIR], ...wanted.map((s) => [s, migrationsDir(s)])] as const) {
    hash.update(`\0${label}\0`);
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".sql")).sort()) {
      hash.update(`${file}\0`);
      hash.update(readFileSync(path.join(dir, file)));
    }
  }
  return `${TEMPLATE_PREFIX}${hash.digest("hex").slice(0, 20)}`;
}

async function withAdmin<T>(databaseUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl(databaseUrl) });
  client.on("error", () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Builds the template once per machine (other processes wait on an advisory lock). */
async function ensureTemplate(databaseUrl: string, services: readonly ServiceWithSchema[]): Promise<string> {
  const name = templateName(services);
  return withAdmin(databaseUrl, async (admin) => {
    const exists = async () => ((await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount ?? 0) > 0;
    if (await exists()) return name;
    await admin.query("SELECT pg_advisory_lock(hashtext($1))", [name]);
    try {
      if (await exists()) return name;
      // Built under a scratch name and renamed when complete, so a half-built one is never used.
      const scratch = `${name}_b${randomBytes(3).toString("hex")}`;
      await admin.query(`CREATE DATABASE ${quoteIdent(scratch)}`);
      const url = new URL(databaseUrl);
      url.pathname = `/${scratch}`;
      try {
        for (const s of [...new Set(services)].sort()) await runMigrations({ databaseUrl: url.toString(), schema: s, dir: migrationsDir(s) });
        await admin.query(`ALTER DATABASE ${quoteIdent(scratch)} RENAME TO ${quoteIdent(name)}`);
      } catch (err) {
        await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(scratch)} WITH (FORCE)`).catch(() => {});
        throw err;
      }
      return name;
    } finally {
      await admin.query("SELECT pg_advisory_unlock(hashtext($1))", [name]).catch(() => {});
    }
  });
}

/**
 * Replaces the empty database `name` with a copy of the services' template. False (the database
 * left empty, for ordinary migrations) when that cannot be done: someone already connected to
 * it, or the template is busy or went away (another checkout's run pruning it).
 */
async function cloneFromTemplate(databaseUrl: string, name: string, services: readonly ServiceWithSchema[]): Promise<boolean> {
  try {
    const template = await ensureTemplate(databaseUrl, services);
    return await withAdmin(databaseUrl, async (admin) => {
      try {
        // No FORCE: a connection already open on it means it is in use; leave it alone.
        await admin.query(`DROP DATABASE ${quoteIdent(name)}`);
      } catch {
        return false;
      }
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          await admin.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)}`);
          return true;
        } catch (err) {
          // 55006: the template is being copied or built by someone else right now.
          if ((err as { code?: string }).code !== "55006") break;
          await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
        }
      }
      await ensureDatabase(databaseUrl);
      return false;
    });
  } catch {
    await ensureDatabase(databaseUrl).catch(() => {});
    return false;
  }
}

/**
 * Drops templates built from migration files that no longer exist (run once per test run by the
 * global setup), so a developer's machine keeps only the current ones.
 */
export async function pruneTemplates(databaseUrl = infraFromEnv().databaseUrl): Promise<void> {
  const current = new Set<string>();
  for (let mask = 1; mask < 1 << ALL_SCHEMA_SERVICES.length; mask++) {
    current.add(templateName(ALL_SCHEMA_SERVICES.filter((_s, i) => mask & (1 << i))));
  }
  await withAdmin(databaseUrl, async (admin) => {
    const { rows } = await admin.query("SELECT datname FROM pg_database WHERE datname LIKE $1", [`${TEMPLATE_PREFIX}%`]);
    for (const { datname } of rows as Array<{ datname: string }>) {
      if (current.has(datname)) continue;
      // Without FORCE: one being copied right now (another run) stays.
      await admin.query(`DROP DATABASE ${quoteIdent(datname)}`).catch(() => {});
    }
  }).catch(() => {});
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
