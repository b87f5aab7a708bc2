import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { createTestEnv, type TestEnv } from "@chat/testkit";
import { createPool, withTx } from "./db";
import { ensureDatabase, runMigrations } from "./migrate";

let env: TestEnv;
let admin: pg.Pool;
const dirs: string[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  admin = new pg.Pool({ connectionString: env.databaseUrl, max: 2 });
});

afterAll(async () => {
  await admin.end();
  await env.cleanup();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "chat-migrations-"));
  dirs.push(dir);
  for (const [name, sql] of Object.entries(files)) writeFileSync(path.join(dir, name), sql);
  return dir;
}

const sql = (up: string, down = "") => `-- Up Migration\n${up}\n\n-- Down Migration\n${down}\n`;

async function history(schema: string): Promise<string[]> {
  const { rows } = await admin.query(`SELECT name FROM "${schema}".pgmigrations ORDER BY run_on, id`);
  return rows.map((r) => r.name);
}

async function tables(schema: string): Promise<string[]> {
  const { rows } = await admin.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name", [schema]);
  return rows.map((r) => r.table_name);
}

describe("runMigrations", () => {
  it("gives each schema its own tables and its own history, platform tables first", async () => {
    const alphaDir = migrationsDir({
      "1700000000000_first.sql": sql("CREATE TABLE things (id bigserial PRIMARY KEY, realm_id bigint NOT NULL, name text NOT NULL);", "DROP TABLE things;"),
      "1700000000001_second.sql": sql("ALTER TABLE things ADD COLUMN note text;", "ALTER TABLE things DROP COLUMN note;"),
    });
    const betaDir = migrationsDir({
      "1700000000000_first.sql": sql("CREATE TABLE things (id bigserial PRIMARY KEY, realm_id bigint NOT NULL, other int);"),
    });
    const applied = await runMigrations({ databaseUrl: env.databaseUrl, schema: "alpha", dir: alphaDir });
    expect(applied).toEqual(["1000000000000_platform-outbox", "1700000000000_first", "1700000000001_second"]);
    expect(await runMigrations({ databaseUrl: env.databaseUrl, schema: "beta", dir: betaDir })).toEqual(["1000000000000_platform-outbox", "1700000000000_first"]);

    expect(await history("alpha")).toEqual(applied);
    expect(await history("beta")).toEqual(["1000000000000_platform-outbox", "1700000000000_first"]);
    expect(await tables("alpha")).toEqual(["outbox", "pgmigrations", "processed_events", "things"]);
    expect(await tables("beta")).toEqual(["outbox", "pgmigrations", "processed_events", "things"]);
    // Same table name, different shapes: the schemas are independent.
    const cols = async (schema: string) =>
      (await admin.query("SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'things' ORDER BY ordinal_position", [schema])).rows.map(
        (r) => r.column_name,
      );
    expect(await cols("alpha")).toEqual(["id", "realm_id", "name", "note"]);
    expect(await cols("beta")).toEqual(["id", "realm_id", "other"]);
    expect(await tables("public")).not.toContain("things");

    // Re-running is a no-op; a new file applies alone.
    expect(await runMigrations({ databaseUrl: env.databaseUrl, schema: "alpha", dir: alphaDir })).toEqual([]);
    writeFileSync(path.join(alphaDir, "1700000000002_third.sql"), sql("CREATE INDEX things_realm ON things (realm_id);"));
    expect(await runMigrations({ databaseUrl: env.databaseUrl, schema: "alpha", dir: alphaDir })).toEqual(["1700000000002_third"]);
    expect(await runMigrations({ databaseUrl: env.databaseUrl, schema: "beta", dir: betaDir })).toEqual([]);
  });

  it("a service pool sees its own schema", async () => {
    const pool = createPool(env.databaseUrl, "beta", 2);
    await withTx(pool, async (tx) => {
      await tx.query("INSERT INTO things (realm_id, other) VALUES (1, 2)");
      await tx.query("INSERT INTO outbox (id, type, realm_id, payload) VALUES (gen_random_uuid(), 'a.b.c', 1, '{}')");
    });
    expect((await admin.query("SELECT count(*)::int AS n FROM beta.things")).rows[0].n).toBe(1);
    expect((await admin.query("SELECT count(*)::int AS n FROM beta.outbox")).rows[0].n).toBe(1);
    expect((await admin.query("SELECT count(*)::int AS n FROM alpha.outbox")).rows[0].n).toBe(0);
    await pool.end();
  });

  it("concurrent runs on one schema apply each migration once", async () => {
    const dir = migrationsDir({ "1700000000000_t.sql": sql("CREATE TABLE racing (id int);") });
    const runs = await Promise.all([0, 1, 2].map(() => runMigrations({ databaseUrl: env.databaseUrl, schema: "gamma", dir })));
    expect(runs.flat().sort()).toEqual(["1000000000000_platform-outbox", "1700000000000_t"]);
    expect(await history("gamma")).toEqual(["1000000000000_platform-outbox", "1700000000000_t"]);
  });

  it("a failing migration changes nothing and is not recorded", async () => {
    const dir = migrationsDir({
      "1700000000000_ok.sql": sql("CREATE TABLE fine (id int);"),
      "1700000000001_bad.sql": sql("CREATE TABLE half (id int);\nSELECT * FROM no_such_table;"),
    });
    await expect(runMigrations({ databaseUrl: env.databaseUrl, schema: "delta", dir })).rejects.toThrow(/no_such_table/);
    expect(await history("delta")).toEqual(["1000000000000_platform-outbox", "1700000000000_ok"]);
    expect(await tables("delta")).not.toContain("half");
  });

  it("refuses a new migration older than one already applied", async () => {
    const dir = migrationsDir({ "1700000000005_later.sql": sql("SELECT 1;") });
    await runMigrations({ databaseUrl: env.databaseUrl, schema: "epsilon", dir });
    writeFileSync(path.join(dir, "1700000000001_sneaky.sql"), sql("SELECT 1;"));
    await expect(runMigrations({ databaseUrl: env.databaseUrl, schema: "epsilon", dir })).rejects.toThrow(/preceding/);
  });
});

describe("ensureDatabase", () => {
  it("creates a missing database and is a no-op when it exists", async () => {
    const url = new URL(env.databaseUrl);
    url.pathname = `/${url.pathname.slice(1)}_extra`;
    await ensureDatabase(url.toString());
    await Promise.all([ensureDatabase(url.toString()), ensureDatabase(url.toString())]);
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    expect((await client.query("SELECT current_database() AS db")).rows[0].db).toBe(url.pathname.slice(1));
    await client.end();
    await admin.query(`DROP DATABASE "${url.pathname.slice(1)}" WITH (FORCE)`);
  });

  it("reads the URL as pg does: a user before an empty host, the server in parameters", async () => {
    const url = new URL(env.databaseUrl);
    const name = `${url.pathname.slice(1)}_libpq`;
    const libpq = `postgres://${url.username}@/${name}?host=${url.hostname}&port=${url.port || 5432}`;
    expect(() => new URL(libpq)).toThrow();
    await ensureDatabase(libpq);
    const client = new pg.Client({ connectionString: libpq });
    await client.connect();
    expect((await client.query("SELECT current_database() AS db")).rows[0].db).toBe(name);
    await client.end();
    await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`);
  });
});

describe("withTx", () => {
  it("commits on success and rolls back on error", async () => {
    const pool = createPool(env.databaseUrl, "alpha", 2);
    await withTx(pool, (tx) => tx.query("INSERT INTO things (realm_id, name) VALUES (1, 'kept')"));
    await expect(
      withTx(pool, async (tx) => {
        await tx.query("INSERT INTO things (realm_id, name) VALUES (1, 'dropped')");
        throw new Error("rule broken");
      }),
    ).rejects.toThrow("rule broken");
    const { rows } = await pool.query("SELECT name FROM things ORDER BY id");
    expect(rows.map((r) => r.name)).toEqual(["kept"]);
    await pool.end();
  });

  it("survives the server dropping the connection mid-transaction, and does not reuse it", async () => {
    const pool = createPool(env.databaseUrl, "alpha", 1);
    await expect(
      withTx(pool, async (tx) => {
        const { rows } = await tx.query("SELECT pg_backend_pid() AS pid");
        await admin.query("SELECT pg_terminate_backend($1)", [rows[0].pid]);
        await new Promise((r) => setTimeout(r, 100)); // the 'error' event arrives while idle
        await tx.query("SELECT 1");
      }),
    ).rejects.toThrow();
    // The single pool slot got a fresh connection.
    expect((await pool.query("SELECT 1 AS one")).rows[0].one).toBe(1);
    await pool.end();
  });
});
