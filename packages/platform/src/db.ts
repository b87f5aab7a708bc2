import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import pg from "pg";
import { outboxCommitted, takeOutboxWrites } from "./outbox-signal";

/** Anything that runs a query: the pool or a transaction's client. Store functions take this first. */
export interface Queryable {
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export type Pool = pg.Pool;

// BIGINT ids fit in a JS number for any realistic deployment; return them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

/** Distinct statements a process prepares at most; past it, new texts run unprepared. */
const MAX_PREPARED = 500;
const preparedNames = new Map<string, string>();
/** A `SELECT *` / `RETURNING *` plan would break when a migration adds a column to its table. */
const STAR = /(?:SELECT|,|\.)\s*\*|RETURNING\s+\*/i;

/**
 * The name a parameterized statement is prepared under (one per distinct text, so PostgreSQL
 * parses and plans it once per connection instead of on every call), or null when it stays
 * unnamed. Parse and plan were about a third of the database time of a channel send.
 */
export function preparedName(text: string): string | null {
  const known = preparedNames.get(text);
  if (known) return known;
  if (preparedNames.size >= MAX_PREPARED || STAR.test(text)) return null;
  const name = `p${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
  preparedNames.set(text, name);
  return name;
}

/** A client that runs every `query(text, values)` with parameters as a prepared statement. */
class PreparingClient extends pg.Client {
  override query(config: unknown, values?: unknown, callback?: unknown): any {
    // pool.query() passes a callback; a checked-out client's query() usually does not.
    if (typeof config === "string" && Array.isArray(values) && values.length > 0) {
      const name = preparedName(config);
      if (name) return (super.query as (...args: unknown[]) => unknown)({ name, text: config, values }, callback);
    }
    return (super.query as (...args: unknown[]) => unknown)(config, values, callback);
  }
}

/**
 * A pool whose connections see only `schema` (plus public) on their search path, and prepare
 * their parameterized statements (see `preparedName`). A migration that changes the type of a
 * column a running process selects needs that process restarted, as with any prepared plan.
 */
export function createPool(databaseUrl: string, schema: string, max = 10): pg.Pool {
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString: databaseUrl,
    max,
    // PGOPTIONS (libpq's, e.g. "-c statement_timeout=5s") still applies; the search path is ours.
    options: [process.env.PGOPTIONS, `-c search_path=${schema},public`].filter(Boolean).join(" "),
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  return pool;
}

const afterCommits = new WeakMap<object, Array<() => void>>();

/**
 * Runs `fn` once what `db` wrote is committed: at once for a pool (autocommit), after the COMMIT
 * of a `withTx` transaction, never if it rolls back. For waking in-process workers (a mail
 * sender, say) that would not yet see the rows before then.
 */
export function afterCommit(db: Queryable, fn: () => void): void {
  if (db instanceof pg.Pool) return fn();
  const fns = afterCommits.get(db);
  if (fns) fns.push(fn);
  else afterCommits.set(db, [fn]);
}

function takeAfterCommit(tx: object): Array<() => void> {
  const fns = afterCommits.get(tx) ?? [];
  afterCommits.delete(tx);
  return fns;
}

/**
 * How many transactions of one pool may be open at once: the pool's size less a reserve. Code in
 * a transaction also reads through the pool (caches, replicas, helpers that take the pool); were
 * every connection held by transactions queued behind the lock of one that needs one more
 * connection to finish, none would move until the pool's connect timeout (every request a 503).
 * The reserve keeps connections for those reads, so the lock holder always gets one.
 */
export function txSlots(poolSize: number): number {
  return Math.max(1, poolSize - Math.max(1, Math.ceil(poolSize / 4)));
}

class TxGate {
  #free: number;
  readonly #waiting: Array<() => void> = [];
  constructor(slots: number, readonly timeoutMs: number) {
    this.#free = slots;
  }

  async acquire(): Promise<void> {
    if (this.#free > 0 && this.#waiting.length === 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        if (timer) clearTimeout(timer);
        resolve();
      };
      const timer =
        this.timeoutMs > 0
          ? setTimeout(() => {
              const at = this.#waiting.indexOf(grant);
              if (at >= 0) this.#waiting.splice(at, 1);
              // The pool's own wording, so it is answered as the pool's timeout is (a 503).
              reject(new Error("timeout exceeded when trying to connect"));
            }, this.timeoutMs)
          : null;
      this.#waiting.push(grant);
    });
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}

const txGates = new WeakMap<pg.Pool, TxGate>();
function txGate(pool: pg.Pool): TxGate {
  let gate = txGates.get(pool);
  if (!gate) {
    const options = (pool as unknown as { options: { max?: number; connectionTimeoutMillis?: number } }).options;
    gate = new TxGate(txSlots(options.max ?? 10), options.connectionTimeoutMillis ?? 0);
    txGates.set(pool, gate);
  }
  return gate;
}

/** The pools whose transaction the current code runs in (a nested `withTx` takes no second slot). */
const openTxs = new AsyncLocalStorage<{ pool: pg.Pool; open: boolean }[]>();

/** Runs `fn` in one transaction: commit on success, rollback on any error. */
export async function withTx<T>(pool: pg.Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const outer = openTxs.getStore() ?? [];
  const nested = outer.some((t) => t.pool === pool && t.open);
  const gate = nested ? null : txGate(pool);
  await gate?.acquire();
  const mine = { pool, open: true };
  try {
    return await openTxs.run([...outer, mine], () => runTx(pool, fn));
  } finally {
    mine.open = false;
    gate?.release();
  }
}

async function runTx<T>(pool: pg.Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
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
    if (takeOutboxWrites(client)) outboxCommitted();
    for (const fn of takeAfterCommit(client)) fn();
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    takeOutboxWrites(client);
    takeAfterCommit(client);
    throw err;
  } finally {
    client.off("error", onError);
    // A broken connection must not go back to the pool.
    client.release(broken);
  }
}
