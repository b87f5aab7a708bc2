import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { ensureDatabase, PLATFORM_MIGRATIONS_DIR, runMigrations } from "@chat/platform";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every service that ships SQL migrations; each owns the schema named after it. */
export function servicesWithMigrations(root = REPO_ROOT): string[] {
  const servicesDir = path.join(root, "services");
  return readdirSync(servicesDir)
    .filter((name) => {
      const dir = path.join(servicesDir, name, "migrations");
      return existsSync(dir) && readdirSync(dir).some((f) => f.endsWith(".sql"));
    })
    .sort();
}

/**
 * Creates the database if needed, then applies each service's pending migrations to its own
 * schema. Returns the applied migration names per service (empty when already current).
 */
export async function migrateAll(databaseUrl: string, log: (line: string) => void = () => {}): Promise<Record<string, string[]>> {
  await ensureDatabase(databaseUrl);
  const applied: Record<string, string[]> = {};
  for (const service of servicesWithMigrations()) {
    applied[service] = await runMigrations({ databaseUrl, schema: service, dir: path.join(REPO_ROOT, "services", service, "migrations") });
    log(`${service}: ${applied[service].length ? `applied ${applied[service].join(", ")}` : "up to date"}`);
  }
  return applied;
}

/** Migration names (file names without `.sql`) a schema needs: the platform's and its own. */
function expectedMigrations(service: string): string[] {
  const names = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".sql")).map((f) => f.slice(0, -4)) : []);
  return [...names(PLATFORM_MIGRATIONS_DIR), ...names(path.join(REPO_ROOT, "services", service, "migrations"))];
}

/** Per service, the migrations not yet recorded in its schema's history (all when it has none). */
export async function pendingMigrations(databaseUrl: string): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const pending: Record<string, string[]> = {};
    for (const service of servicesWithMigrations()) {
      const table = await client.query("SELECT to_regclass($1) AS t", [`"${service}".pgmigrations`]);
      const applied = new Set<string>(
        table.rows[0].t ? (await client.query(`SELECT name FROM "${service}".pgmigrations`)).rows.map((r: { name: string }) => r.name) : [],
      );
      const missing = expectedMigrations(service).filter((n) => !applied.has(n));
      if (missing.length) pending[service] = missing;
    }
    return pending;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Waits (without applying anything) until every migration is in: what a pod's init container
 * does while the release's migration job runs. Resolves false on timeout.
 */
export async function waitForMigrations(databaseUrl: string, timeoutSeconds: number, log: (line: string) => void = () => {}): Promise<boolean> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let last = "";
  for (;;) {
    let status: string;
    try {
      const pending = await pendingMigrations(databaseUrl);
      if (Object.keys(pending).length === 0) return true;
      status = `waiting for migrations: ${Object.entries(pending).map(([s, n]) => `${s} (${n.length})`).join(", ")}`;
    } catch (err) {
      status = `waiting for the database: ${(err as Error).message}`;
    }
    if (status !== last) log(status);
    last = status;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 2000));
  }
}
