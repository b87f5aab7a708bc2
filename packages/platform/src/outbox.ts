import { randomUUID } from "node:crypto";
import pg from "pg";
import type { DomainEnvelope } from "@chat/contracts";
import type { AmqpClient } from "./amqp";
import { withTx, type Queryable } from "./db";
import type { Logger } from "./logger";
import { onOutboxCommitted, onOutboxFlush, outboxRowsWritten } from "./outbox-signal";
import { outboxMetrics, watchRelay } from "./pipeline-metrics";

export interface NewEvent {
  type: string;
  realmId: number;
  payload: Record<string, unknown>;
  version?: number;
}

/**
 * The envelope an outbox row carries. For a statement that writes its outbox row itself (in the
 * same statement as the change, see messaging's one-statement send); everyone else calls emitEvent.
 */
export function newEnvelope(event: NewEvent): DomainEnvelope {
  return {
    id: randomUUID(),
    type: event.type,
    version: event.version ?? 1,
    occurred_at: new Date().toISOString(),
    realm_id: event.realmId,
    payload: event.payload,
  };
}

/** Writes a domain event into the outbox, inside the caller's transaction. Call only from actions. */
export async function emitEvent(tx: Queryable, event: NewEvent): Promise<DomainEnvelope> {
  const envelope = newEnvelope(event);
  await tx.query(
    "INSERT INTO outbox (id, type, version, realm_id, payload, occurred_at) VALUES ($1, $2, $3, $4, $5, $6)",
    [envelope.id, envelope.type, envelope.version, envelope.realm_id, envelope.payload, envelope.occurred_at],
  );
  outboxRowsWritten(tx);
  return envelope;
}

export interface RelayOptions {
  pool: pg.Pool;
  schema: string;
  amqp: AmqpClient;
  log: Logger;
  batchSize?: number;
  /**
   * How often it looks for rows nobody woke it for: written by another replica whose relay could
   * not publish them yet, by a process without a relay (the admin CLI), or by a release that
   * relied on NOTIFY.
   */
  pollMs?: number;
  /**
   * How long to wait before reading the next batch when more rows were committed while the
   * broker confirmed the last one (OUTBOX_LINGER_MS; default 0: at once).
   */
  lingerMs?: number;
  /** How often the run loop deletes old published rows and old idempotency records. */
  pruneEveryMs?: number;
  /**
   * Rows marked published (by relays of releases before the delete on publish) older than this
   * are deleted (default 24 h).
   */
  retentionHours?: number;
  /**
   * `processed_events` rows older than this are deleted (default 7 days): far beyond any
   * redelivery, so idempotency holds while the table stays small.
   */
  processedRetentionHours?: number;
}

/** Sequence numbers a prune's statement covers: at most that many rows deleted per transaction. */
const PRUNE_CHUNK = 5_000;

/** How soon a relay looks again when another relay held the schema's lock (was publishing). */
const LOCK_BUSY_RETRY_MS = 5;

/**
 * Publishes unsent outbox rows in commit order with publisher confirms, then deletes them: a
 * row's absence is its mark of "sent". One relay per schema publishes at a time (advisory lock),
 * so replicas never reorder events.
 * While RabbitMQ is down the rows wait; publishing resumes where it stopped.
 *
 * It runs when its own process commits outbox rows (see outbox-signal.ts), not on a NOTIFY:
 * waking a listening backend and then this process on every commit was about a twentieth of
 * the machine's CPU per channel message (bench/README.md, round 7). A relay that finds another
 * one publishing looks again in a few milliseconds, since that one may have read the rows
 * before this process committed its own; rows that nobody woke a relay for wait for the poll.
 */
export class OutboxRelay {
  private running = false;
  private wake: (() => void) | null = null;
  /** Woken while publishing: go round again instead of sleeping. */
  private dirty = false;
  /** The last batch found another relay holding the lock. */
  private lockBusy = false;
  private loop: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;
  private stopWaking: (() => void) | null = null;
  private stopFlushing: (() => void) | null = null;
  private unwatch: (() => void) | null = null;
  /** Claims (reads of unpublished rows) sent so far. */
  private claimsSent = 0;
  /** Callers of `flushed`, each with the claims sent when it asked. */
  private flushWaiters: Array<{ after: number; resolve: () => void }> = [];
  private lastPrune = 0;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly lingerMs: number;
  private readonly metrics: { published: { inc(n: number): void }; failures: { inc(): void }; batchSize: { observe(n: number): void } };

  /** BEGIN, the relay lock, and (only when it was taken) the oldest unpublished rows: one round trip. */
  private readonly claimSql: string;

  constructor(private readonly opts: RelayOptions) {
    this.batchSize = opts.batchSize ?? 500;
    this.pollMs = opts.pollMs ?? 1000;
    this.lingerMs = opts.lingerMs ?? 0;
    const lockName = `${opts.schema}.outbox`.replace(/'/g, "''");
    // The read is its own statement, after the lock's: in READ COMMITTED each statement takes its
    // snapshot when it starts, so it sees the deletes of the relay that held the lock before us
    // (a single statement would snapshot before the lock was taken and republish those rows).
    // The read walks the partial index in order, never a bitmap or a sequential scan: deleting a
    // published row leaves its entry in `outbox_unpublished` until vacuum, and only an index scan
    // flags such entries dead as it passes them, so the next claim skips them without reading the
    // table. A bitmap scan visits every one of them again on every claim: that grew to 0.9 ms a
    // claim within a minute of sends (bench/README.md, round 16, when published rows were marked).
    this.claimSql = `BEGIN; SET LOCAL synchronous_commit TO off;
      SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true),
             set_config('chat.outbox_lock', pg_try_advisory_xact_lock(hashtext('${lockName}'))::text, true) AS ok;
      SELECT seq, id, type, version, realm_id, payload, occurred_at FROM outbox
       WHERE current_setting('chat.outbox_lock') = 'true' AND published_at IS NULL
       ORDER BY seq LIMIT ${Math.trunc(this.batchSize)}`;
    const m = outboxMetrics();
    this.metrics = { published: m.published.labels(opts.schema), failures: m.failures.labels(opts.schema), batchSize: m.batchSize.labels(opts.schema) };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.lastPrune = Date.now();
    // After a broker outage, publish the backlog at once instead of at the end of a backoff.
    this.unsubscribe = this.opts.amqp.onConnected(() => this.notified());
    this.stopWaking = onOutboxCommitted(() => this.notified());
    this.stopFlushing = onOutboxFlush(() => this.flushed());
    this.unwatch = watchRelay({ schema: this.opts.schema, pending: () => this.pending() });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.stopWaking?.();
    this.stopFlushing?.();
    this.unwatch?.();
    this.wake?.();
    await this.loop;
    for (const w of this.flushWaiters.splice(0)) w.resolve();
  }

  /**
   * Resolves once a claim sent after the call held the lock and everything it read is published
   * (the drain that sent it ended without finding the lock taken): then every row committed
   * before the call is published, by that drain or by another relay before it. Waits on while the
   * broker is down.
   */
  flushed(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      this.flushWaiters.push({ after: this.claimsSent, resolve });
      this.notified();
    });
  }

  /** After a drain that held the lock to its end: its last claim covered everyone who asked before it. */
  private settleFlushes(): void {
    if (this.flushWaiters.length === 0) return;
    const done = this.flushWaiters.filter((w) => w.after < this.claimsSent);
    this.flushWaiters = this.flushWaiters.filter((w) => w.after >= this.claimsSent);
    for (const w of done) w.resolve();
  }

  /** Unpublished rows and the age of the oldest (for `/metrics`). */
  async pending(): Promise<{ count: number; oldestSeconds: number }> {
    // In index order for the same reason as the claim (see claimSql): a bitmap scan would read
    // every published row still listed in the partial index on every scrape.
    const { rows } = await withTx(this.opts.pool, async (tx) => {
      await tx.query("SET LOCAL enable_bitmapscan TO off; SET LOCAL enable_seqscan TO off");
      return tx.query<{ count: number; oldest: number }>(
        `SELECT count(*)::int AS count, coalesce(extract(epoch FROM now() - min(occurred_at)), 0)::float8 AS oldest
           FROM outbox WHERE published_at IS NULL`,
      );
    });
    return { count: rows[0].count, oldestSeconds: Math.max(0, rows[0].oldest) };
  }

  /** Publishes everything pending now; returns how many rows were sent. Used by tests and shutdown. */
  drain(): Promise<number> {
    return this.publishBatches();
  }

  private async run(): Promise<void> {
    let backoff = 100;
    let busyDelay = LOCK_BUSY_RETRY_MS;
    while (this.running) {
      try {
        this.dirty = false;
        await this.drain();
        backoff = 100;
        if (this.lockBusy) {
          // Longer each time in a row: a relay waiting for a slow broker's confirms holds the lock.
          await new Promise((r) => setTimeout(r, busyDelay));
          busyDelay = Math.min(busyDelay * 2, 250);
          continue;
        }
        this.settleFlushes();
        busyDelay = LOCK_BUSY_RETRY_MS;
        await this.maybePrune();
        await this.sleep(this.pollMs);
      } catch (err) {
        this.metrics.failures.inc();
        this.opts.log.warn({ err: (err as Error).message }, "outbox relay: publish failed, will retry");
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  private async maybePrune(): Promise<void> {
    const every = this.opts.pruneEveryMs ?? 3_600_000;
    if (Date.now() - this.lastPrune < every) return;
    this.lastPrune = Date.now();
    await this.prune(this.opts.retentionHours ?? 24).catch((err) =>
      this.opts.log.warn({ err: (err as Error).message }, "outbox relay: prune failed"),
    );
  }

  private sleep(ms: number): Promise<void> {
    if (this.dirty || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private notified(): void {
    this.dirty = true;
    this.wake?.();
  }

  /**
   * Publishes batches on one connection until a batch comes short with nothing committed in this
   * process meanwhile, or the lock is another relay's; returns how many rows were sent.
   */
  private async publishBatches(): Promise<number> {
    const client = await this.opts.pool.connect();
    // The client stays checked out while the broker confirms; if PostgreSQL drops it meanwhile,
    // pg emits 'error' on it, which without a listener would crash the process.
    let broken: Error | undefined;
    const onError = (err: Error) => (broken = err);
    client.on("error", onError);
    try {
      // One round trip per batch: the lock and the read travel with BEGIN, the delete of the
      // published rows (the mark) with COMMIT and, when there is more to publish, with the next
      // batch's BEGIN, lock and read.
      // The mark need not wait for the WAL flush: a mark lost in a PostgreSQL
      // crash only republishes those rows, and consumers are idempotent on the envelope id.
      // These commits were about 40% of the WAL flushes of a channel send (bench/README.md).
      this.claimsSent++;
      let results = (await client.query(this.claimSql)) as unknown as pg.QueryResult[];
      let total = 0;
      for (;;) {
        const locked = results[results.length - 2].rows[0].ok === "true";
        const rows = results[results.length - 1].rows;
        this.lockBusy = !locked;
        if (!locked || rows.length === 0) {
          await client.query("ROLLBACK");
          return total;
        }
        await this.opts.amqp.publishConfirmed(
          rows.map((r) => ({
            routingKey: r.type,
            envelope: {
              id: r.id,
              type: r.type,
              version: r.version,
              occurred_at: new Date(r.occurred_at).toISOString(),
              realm_id: Number(r.realm_id),
              payload: r.payload,
            },
          })),
        );
        total += rows.length;
        this.metrics.published.inc(rows.length);
        this.metrics.batchSize.observe(rows.length);
        // The sequence numbers are PostgreSQL's own bigints, so writing them inline is safe (a
        // parameter would forbid the statements after it).
        // Published rows are deleted rather than updated: setting `published_at` wrote a second
        // version of the row with new entries in the primary key and the id's unique index (the
        // column is in the partial index's predicate, so the update is never HOT), and kept a day
        // of events in the table for nothing to read. Deleting them was 7-11% more sends per
        // second on the send bench (bench/README.md, round 19).
        const seqs = rows.map((r) => String(r.seq)).filter((seq) => /^\d+$/.test(seq));
        const mark = `DELETE FROM outbox WHERE seq = ANY('{${seqs.join(",")}}'::bigint[]); COMMIT`;
        if (rows.length < this.batchSize && !this.dirty) {
          await client.query(mark);
          return total;
        }
        // Rows were left, or this process committed more while the broker confirmed. In the
        // latter case more are likely on their way: waiting a little makes the next batch larger.
        if (this.lingerMs > 0 && rows.length < this.batchSize) await new Promise((r) => setTimeout(r, this.lingerMs));
        this.dirty = false;
        this.claimsSent++;
        results = (await client.query(`${mark}; ${this.claimSql}`)) as unknown as pg.QueryResult[];
      }
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      client.off("error", onError);
      // A broken connection must not go back to the pool.
      client.release(broken);
    }
  }

  /**
   * Removes published rows older than `hours` and idempotency records older than the
   * configured retention; keeps both tables small. The run loop calls it periodically. This
   * release's relays delete what they publish; the rows left marked published are those of
   * relays of earlier releases (during a rolling update, or written before it).
   *
   * The outbox part costs what it deletes, not the table: it walks the primary key from the
   * oldest row to the first one written within the retention (rows are written in `seq` order,
   * give or take transactions open across the cut), then deletes the published rows below that
   * point by ranges of PRUNE_CHUNK sequence numbers, each its own short statement. A plain
   * `DELETE ... WHERE published_at < ...` read the whole outbox, a day of events, every hour.
   * A row published within the retention (a relay that was down for a while) stays until a
   * later prune; so does one written out of `seq` order across the cut.
   */
  async prune(hours = this.opts.retentionHours ?? 24): Promise<{ outbox: number; processed: number }> {
    const keepHours = Number(hours);
    const { from, to } = await withTx(this.opts.pool, async (tx) => {
      await tx.query("SET LOCAL enable_bitmapscan TO off; SET LOCAL enable_seqscan TO off");
      const { rows } = await tx.query<{ from: string | null; to: string | null }>(
        `SELECT (SELECT min(seq) FROM outbox)::text AS from, coalesce(
           (SELECT seq FROM outbox WHERE occurred_at >= now() - $1::float8 * interval '1 hour' ORDER BY seq LIMIT 1),
           (SELECT max(seq) + 1 FROM outbox))::text AS to`,
        [keepHours],
      );
      return rows[0];
    });
    let outbox = 0;
    if (from !== null && to !== null) {
      for (let lo = Number(from); lo < Number(to); lo += PRUNE_CHUNK) {
        const { rowCount } = await this.opts.pool.query(
          `DELETE FROM outbox WHERE seq >= $1::bigint AND seq < least($1::bigint + ${PRUNE_CHUNK}, $2::bigint)
              AND published_at IS NOT NULL AND published_at < now() - $3::float8 * interval '1 hour'`,
          [lo, to, keepHours],
        );
        outbox += rowCount ?? 0;
      }
    }
    // Consumers record only the few events they take from other services (account changes):
    // a small table, read whole.
    const processed = await this.opts.pool.query(
      "DELETE FROM processed_events WHERE processed_at < now() - $1::float8 * interval '1 hour'",
      [this.opts.processedRetentionHours ?? 24 * 7],
    );
    return { outbox, processed: processed.rowCount ?? 0 };
  }
}
