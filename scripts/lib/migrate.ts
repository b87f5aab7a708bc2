import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureDatabase, runMigrations } from "@chat/platform";

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
