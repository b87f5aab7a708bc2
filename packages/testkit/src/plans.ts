import type pg from "pg";

/** A statement prepared by a PlanProbe, with the arguments it was first run with. */
export interface PlannedStatement {
  label: string;
  name: string;
  args: string;
}

/** How a measured run is planned. */
export interface PlanOptions {
  /** Run with the generic plan made when the tables were small (instead of one for its values). */
  generic?: boolean;
}

let probes = 0;

/**
 * Checks that a statement costs what it touches, not the size of the tables around it. `plan`
 * prepares the statement a store function sends and runs it once, with a generic plan, while the
 * tables are small; after the test fills them, `buffersOf` and `rowsReadFrom` run it again
 * (changes rolled back) and count what it touched. That second run is planned as PostgreSQL plans
 * a prepared statement's first executions: for its values, from the tables' sizes, with no
 * statistics (the test database is never analyzed, as on a server without autovacuum). With
 * `{ generic: true }` the run uses instead the generic plan made on the small tables, which a
 * server keeps using for a statement until the tables' statistics change (bench/README.md,
 * rounds 19 and 20).
 */
export class PlanProbe {
  constructor(private readonly client: pg.PoolClient) {}

  /** Prepares the statement `run` sends through a recording client, with a generic plan made now. */
  async plan(label: string, run: (db: never) => Promise<unknown>): Promise<PlannedStatement> {
    let captured: { text: string; values: unknown[] } | null = null;
    const recorder = {
      query: async (text: string, values: unknown[]) => {
        captured = { text, values };
        return this.client.query(text, values);
      },
    };
    await run(recorder as never);
    const { text, values } = captured!;
    const name = `plan_probe_${++probes}`;
    const literal = (v: unknown): string =>
      v === null
        ? "NULL"
        : Array.isArray(v)
          ? `ARRAY[${v.map(literal).join(", ")}]::bigint[]`
          : typeof v === "number"
            ? String(v)
            : v instanceof Date
              ? `'${v.toISOString()}'`
              : `'${String(v).replace(/'/g, "''")}'`;
    const args = values.map(literal).join(", ");
    await this.client.query(`PREPARE ${name} AS ${text}`);
    await this.client.query("BEGIN");
    try {
      await this.client.query("SET LOCAL plan_cache_mode = force_generic_plan");
      await this.client.query(`EXECUTE ${name}(${args})`);
    } finally {
      await this.client.query("ROLLBACK");
    }
    return { label, name, args };
  }

  /** Shared buffers the prepared statement touches. */
  async buffersOf(p: PlannedStatement, opts: PlanOptions = {}): Promise<number> {
    const top = await this.analyze(p, opts);
    return (top["Shared Hit Blocks"] ?? 0) + (top["Shared Read Blocks"] ?? 0);
  }

  /** Rows the statement's scans of `relation` produce, over all their loops. */
  async rowsReadFrom(p: PlannedStatement, relation: string, opts: PlanOptions = {}): Promise<number> {
    const walk = (node: Record<string, any>): number =>
      (node["Relation Name"] === relation ? node["Actual Rows"] * node["Actual Loops"] + (node["Rows Removed by Filter"] ?? 0) * node["Actual Loops"] : 0) +
      ((node.Plans as Array<Record<string, any>> | undefined) ?? []).reduce((n, child) => n + walk(child), 0);
    return walk(await this.analyze(p, opts));
  }

  /** The prepared statement's plan, run now with its changes rolled back. */
  async analyze(p: PlannedStatement, opts: PlanOptions = {}): Promise<Record<string, any>> {
    await this.client.query("BEGIN");
    try {
      if (opts.generic) await this.client.query("SET LOCAL plan_cache_mode = force_generic_plan");
      const { rows } = await this.client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE ${p.name}(${p.args})`);
      return rows[0]["QUERY PLAN"][0].Plan;
    } finally {
      await this.client.query("ROLLBACK");
    }
  }
}
