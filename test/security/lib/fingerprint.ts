import pg from "pg";

/**
 * A fingerprint of everything the services store: for each table of each service schema, its row
 * count and a hash of its rows. Two equal fingerprints mean no stored row was added, removed or
 * changed. A few tables are left out on purpose because background work changes them, not the
 * request under test:
 * - `outbox` rows are deleted by the relay once published: only the last sequence number handed
 *   out counts (a new event moves it, and so would a rolled-back one);
 * - `processed_events` and messaging's replicas of accounts data are written by consumers,
 *   asynchronously, after some earlier successful request.
 */
const ASYNC_TABLES = new Set(["processed_events", "messaging.users", "messaging.replica_realms", "messaging.alert_words"]);
const SCHEMAS = ["accounts", "messaging", "scheduler", "events"];

export type Fingerprint = Map<string, string>;

export class StoreFingerprint {
  private sql: string | null = null;

  private constructor(private readonly client: pg.Client) {}

  static async connect(databaseUrl: string): Promise<StoreFingerprint> {
    const client = new pg.Client({ connectionString: databaseUrl });
    client.on("error", () => {});
    await client.connect();
    return new StoreFingerprint(client);
  }

  /** The tables compared (after `take()` ran once). */
  tables: string[] = [];

  private async build(): Promise<string> {
    const { rows } = await this.client.query<{ schema: string; table: string }>(
      `SELECT table_schema AS schema, table_name AS table FROM information_schema.tables
        WHERE table_schema = ANY($1) AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'pgmigrations%'
        ORDER BY 1, 2`,
      [SCHEMAS],
    );
    const parts: string[] = [];
    for (const { schema, table } of rows) {
      const name = `${schema}.${table}`;
      if (ASYNC_TABLES.has(table) || ASYNC_TABLES.has(name)) continue;
      const ident = `"${schema}"."${table}"`;
      parts.push(
        table === "outbox"
          ? `SELECT '${name}' AS t, coalesce(pg_sequence_last_value(pg_get_serial_sequence('${ident}', 'seq'))::text, '') AS f`
          : `SELECT '${name}' AS t, count(*)::text || ':' || coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') AS f FROM ${ident} x`,
      );
      this.tables.push(name);
    }
    return parts.join("\nUNION ALL\n");
  }

  async take(): Promise<Fingerprint> {
    this.sql ??= await this.build();
    const { rows } = await this.client.query<{ t: string; f: string }>(this.sql);
    return new Map(rows.map((r) => [r.t, r.f]));
  }

  /** Names of the tables whose fingerprint differs. */
  static diff(a: Fingerprint, b: Fingerprint): string[] {
    const names = new Set([...a.keys(), ...b.keys()]);
    return [...names].filter((n) => a.get(n) !== b.get(n));
  }

  /** Row counts, for the report. */
  async rowCounts(): Promise<Record<string, number>> {
    const fp = await this.take();
    return Object.fromEntries([...fp].map(([t, f]) => [t, Number(f.split(":")[0])]));
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}
