import type pg from "pg";
import { withTx } from "./db";

/**
 * Runs a consumer's work once per envelope id: the id is recorded in `processed_events` in the
 * same transaction as the work, so a redelivered message is skipped. Returns false if skipped.
 */
export async function oncePerEvent(
  pool: pg.Pool,
  consumer: string,
  eventId: string,
  work: (tx: pg.PoolClient) => Promise<void>,
): Promise<boolean> {
  return withTx(pool, async (tx) => {
    const { rowCount } = await tx.query(
      "INSERT INTO processed_events (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
      [consumer, eventId],
    );
    if (!rowCount) return false;
    await work(tx);
    return true;
  });
}
