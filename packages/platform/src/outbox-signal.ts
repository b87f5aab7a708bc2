import pg from "pg";
import type { Queryable } from "./db";

/**
 * How a commit that wrote outbox rows wakes the outbox relays of its own process, with no
 * database round trip: the write marks its transaction, `withTx` calls `outboxCommitted` after
 * the COMMIT (an autocommit statement on the pool calls it at once), and each running relay
 * publishes. A relay of another replica hears nothing: each publishes what its own process
 * commits, and every relay publishes all unpublished rows when it runs (see OutboxRelay).
 */
const wakers = new Set<() => void>();
/** Transactions (their clients) that wrote outbox rows and have not ended yet. */
const written = new WeakSet<object>();

/** Registers a relay's wake-up; returns its removal. */
export function onOutboxCommitted(wake: () => void): () => void {
  wakers.add(wake);
  return () => {
    wakers.delete(wake);
  };
}

/** Outbox rows were committed in this process: wake its relays. */
export function outboxCommitted(): void {
  for (const wake of wakers) wake();
}

/** Call after writing outbox rows through `db`: wakes the relays now, or when its transaction commits. */
export function outboxRowsWritten(db: Queryable): void {
  if (db instanceof pg.Pool) outboxCommitted();
  else written.add(db);
}

/** Whether this transaction wrote outbox rows (forgotten either way: its client is reused). */
export function takeOutboxWrites(tx: object): boolean {
  const had = written.has(tx);
  written.delete(tx);
  return had;
}
