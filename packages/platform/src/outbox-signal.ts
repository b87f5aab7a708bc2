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
/** The running relays' "published everything committed so far" waits. */
const flushers = new Set<() => Promise<void>>();
/** Transactions (their clients) that wrote outbox rows and have not ended yet. */
const written = new WeakSet<object>();

/** Registers a relay's wake-up; returns its removal. */
export function onOutboxCommitted(wake: () => void): () => void {
  wakers.add(wake);
  return () => {
    wakers.delete(wake);
  };
}

/** Registers a relay's flush (see `outboxPublished`); returns its removal. */
export function onOutboxFlush(flush: () => Promise<void>): () => void {
  flushers.add(flush);
  return () => {
    flushers.delete(flush);
  };
}

/**
 * Resolves once this process's relays have published every outbox row committed before the
 * call (at once when no relay runs here), or after `timeoutMs` whatever happened: the change is
 * committed and will be published; the wait only keeps other services' copies from lagging
 * behind the answer. For the rare changes that other services keep cached (organization
 * settings, linkifiers): the caller answers once the event is on its way to them.
 */
export async function outboxPublished(timeoutMs = 2000): Promise<void> {
  if (flushers.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  try {
    await Promise.race([Promise.all([...flushers].map((flush) => flush())), timeout]);
  } finally {
    clearTimeout(timer);
  }
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
