import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { createTestEnv, type TestEnv } from "@chat/testkit";
import { createPool, preparedName, withTx } from "./db";

const SCHEMA = "dbtest";
let env: TestEnv;
let pool: pg.Pool;

beforeAll(async () => {
  env = await createTestEnv();
  await env.migrateSchema(SCHEMA);
  pool = createPool(env.databaseUrl, SCHEMA, 2);
  await pool.query("CREATE TABLE items (id bigserial PRIMARY KEY, realm_id bigint NOT NULL, name text NOT NULL)");
});

afterAll(async () => {
  await pool.end();
  await env.cleanup();
});

/** Statements prepared on the connection `client` holds. */
async function prepared(client: pg.PoolClient): Promise<string[]> {
  const { rows } = await client.query("SELECT statement FROM pg_prepared_statements");
  return rows.map((r) => String(r.statement).replace(/\s+/g, " ").trim());
}

describe("prepared statements", () => {
  it("names one statement per text, and leaves star selections unnamed", () => {
    const a = preparedName("SELECT id FROM items WHERE realm_id = $1");
    expect(a).toMatch(/^p[0-9a-f]{20}$/);
    expect(preparedName("SELECT id FROM items WHERE realm_id = $1")).toBe(a);
    expect(preparedName("SELECT name FROM items WHERE realm_id = $1")).not.toBe(a);
    expect(preparedName("SELECT * FROM items WHERE realm_id = $1")).toBeNull();
    expect(preparedName("SELECT i.* FROM items i WHERE realm_id = $1")).toBeNull();
    expect(preparedName("INSERT INTO items (realm_id, name) VALUES ($1, $2) RETURNING *")).toBeNull();
    expect(preparedName("SELECT count(*) AS n FROM items WHERE realm_id = $1")).not.toBeNull();
  });

  it("prepares parameterized queries on the connection, through the pool and in transactions", async () => {
    await withTx(pool, async (tx) => {
      await tx.query("INSERT INTO items (realm_id, name) VALUES ($1, $2)", [1, "a"]);
      await tx.query("INSERT INTO items (realm_id, name) VALUES ($1, $2)", [1, "b"]);
      const { rows } = await tx.query("SELECT name FROM items WHERE realm_id = $1 ORDER BY id", [1]);
      expect(rows.map((r) => r.name)).toEqual(["a", "b"]);
      await tx.query("SELECT * FROM items WHERE realm_id = $1", [1]);
      await tx.query("SELECT count(*) AS n FROM items");
      const names = await prepared(tx as pg.PoolClient);
      expect(names).toContain("INSERT INTO items (realm_id, name) VALUES ($1, $2)");
      expect(names).toContain("SELECT name FROM items WHERE realm_id = $1 ORDER BY id");
      // Star selections and statements without parameters run unnamed.
      expect(names.some((n) => n.includes("*"))).toBe(false);
    });
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM items WHERE realm_id = $1", [1]);
    expect(rows[0].n).toBe(2);
  });

  it("keeps the other call forms working (config objects, callbacks, errors)", async () => {
    const { rows } = await pool.query({ text: "SELECT $1::int + 1 AS v", values: [41] });
    expect(rows[0].v).toBe(42);
    const viaCallback = await new Promise<number>((resolve, reject) => {
      pool.connect((err, client, release) => {
        if (err || !client) return reject(err);
        client.query("SELECT $1::int AS v", [7], (qErr: Error | null, res: pg.QueryResult) => {
          release();
          if (qErr) reject(qErr);
          else resolve(res.rows[0].v);
        });
      });
    });
    expect(viaCallback).toBe(7);
    await expect(pool.query("SELECT id FROM missing_table WHERE id = $1", [1])).rejects.toThrow(/missing_table/);
    // The failed statement is not left half-prepared: the connection keeps working.
    await expect(pool.query("SELECT id FROM missing_table WHERE id = $1", [1])).rejects.toThrow(/missing_table/);
    expect((await pool.query("SELECT $1::text AS v", ["ok"])).rows[0].v).toBe("ok");
  });
});

describe("connection options", () => {
  it("applies PGOPTIONS as libpq does, beside the schema's search path", async () => {
    const before = process.env.PGOPTIONS;
    process.env.PGOPTIONS = "-c statement_timeout=4321 -c application_name=pgoptions-test";
    const p = createPool(env.databaseUrl, SCHEMA, 1);
    try {
      const { rows } = await p.query("SELECT current_setting('statement_timeout') AS t, current_setting('application_name') AS a, current_schema() AS s");
      expect(rows[0]).toEqual({ t: "4321ms", a: "pgoptions-test", s: SCHEMA });
    } finally {
      await p.end();
      if (before === undefined) delete process.env.PGOPTIONS;
      else process.env.PGOPTIONS = before;
    }
  });
});
