import { fileURLToPath } from "node:url";
import { runner } from "node-pg-migrate";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import type { Logger } from "./logger";

/** Creates the database named in the URL if it does not exist (first start on a fresh server). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  // Read as pg reads it (a socket directory as the host, `user@/db?host=...`), then the same
  // server's maintenance database. The URL's own fields win over ours, so it is not passed along.
  const config = parseIntoClientConfig(databaseUrl);
  const name = config.database;
  if (!name) throw new Error("DATABASE_URL names no database");
  const client = new pg.Client({ ...config, database: "postgres" });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((err) => {
      if (err.code !== "42P04") throw err; // created concurrently
    });
  } finally {
    await client.end();
  }
}

/** The platform's own migrations (outbox, processed_events); they run first in every schema. */
export const PLATFORM_MIGRATIONS_DIR = fileURLToPath(new URL("../migrations", import.meta.url));

/**
 * Applies a service's migrations (`services/<name>/migrations/*.sql`) to its own schema, with its
 * own history table in that schema. Safe to run concurrently: node-pg-migrate takes one
 * database-wide lock and refuses (rather than waits) when another run holds it, so a refused
 * run waits and tries again (several services or replicas starting at once).
 */
export async function runMigrations(opts: { databaseUrl: string; schema: string; dir: string; log?: Logger; lockWaitMs?: number }): Promise<string[]> {
  const deadline = Date.now() + (opts.lockWaitMs ?? 60_000);
  for (;;) {
    try {
      return await runOnce(opts);
    } catch (err) {
      const busy = /Another migration is already running/.test((err as Error).message ?? "");
      if (!busy || Date.now() > deadline) throw err;
      opts.log?.debug({ schema: opts.schema }, "migrations locked by another run; waiting");
      await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
    }
  }
}

async function runOnce(opts: { databaseUrl: string; schema: string; dir: string; log?: Logger }): Promise<string[]> {
  const applied = await runner({
    databaseUrl: opts.databaseUrl,
    // Platform and service files sort together by their timestamp prefix.
    dir: [`${PLATFORM_MIGRATIONS_DIR}/*.sql`, `${opts.dir}/*.sql`],
    useGlob: true,
    direction: "up",
    schema: opts.schema,
    createSchema: true,
    migrationsSchema: opts.schema,
    createMigrationsSchema: true,
    migrationsTable: "pgmigrations",
    count: Infinity,
    checkOrder: true,
    verbose: false,
    log: (msg: string) => opts.log?.debug(msg),
  });
  return applied.map((m) => m.name);
}

/**
 * What a service does before it serves: creates the database if the server has none yet and
 * brings its own schema up to date. Idempotent and locked, so replicas (or the harness, or
 * `chat migrate`) doing it at the same time are fine.
 */
export async function migrateAtStart(opts: { databaseUrl: string; schema: string; dir: string; log: Logger }): Promise<void> {
  await ensureDatabase(opts.databaseUrl);
  await runMigrations(opts);
}
