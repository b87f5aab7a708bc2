import pg from "pg";

/** Anything that runs a query: the pool or a transaction's client. Store functions take this first. */
export interface Queryable {
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export type Pool = pg.Pool;

// BIGINT ids fit in a JS number for any realistic deployment; return them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

/** A pool whose connections see only `schema` (plus public) on their search path. */
export function createPool(databaseUrl: string, schema: string, max = 10): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    options: `-c search_path=${schema},public`,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  return pool;
}

/** Runs `fn` in one transaction: commit on success, rollback on any error. */
export async function withTx<T>(pool: pg.Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A checked-out client whose server goes away between statements emits 'error'; without a
  // listener that would crash the process. The failure still reaches the caller via the next query.
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.off("error", onError);
    // A broken connection must not go back to the pool.
    client.release(broken);
  }
}
