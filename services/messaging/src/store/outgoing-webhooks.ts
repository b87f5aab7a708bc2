import type { Queryable } from "@chat/platform";

export interface DeliveryRow {
  id: number;
  realmId: number;
  botId: number;
  messageId: number;
  trigger: "mention" | "direct_message";
  attempts: number;
  claimedAt: Date;
}

const toRow = (r: any): DeliveryRow => ({
  id: Number(r.id),
  realmId: Number(r.realm_id),
  botId: Number(r.bot_id),
  messageId: Number(r.message_id),
  trigger: r.trigger,
  attempts: r.attempts,
  claimedAt: r.claimed_at,
});

export async function insertDeliveries(
  db: Queryable,
  realmId: number,
  messageId: number,
  triggers: Array<{ botId: number; trigger: DeliveryRow["trigger"] }>,
  now: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO outgoing_webhook_deliveries (realm_id, bot_id, message_id, trigger, created_at, next_attempt_at)
     SELECT $1, bot_id, $2, trigger, $3, $3 FROM unnest($4::bigint[], $5::text[]) AS t (bot_id, trigger)`,
    [realmId, messageId, now, triggers.map((t) => t.botId), triggers.map((t) => t.trigger)],
  );
}

/**
 * Takes the oldest due delivery nobody holds (never claimed, or its holder's lease ran out before
 * `staleBefore`) and counts the attempt; concurrent processes skip each other's rows.
 */
export async function claimDelivery(db: Queryable, now: Date, staleBefore: Date): Promise<DeliveryRow | null> {
  const { rows } = await db.query(
    `UPDATE outgoing_webhook_deliveries SET claimed_at = $1, attempts = attempts + 1
      WHERE id = (SELECT id FROM outgoing_webhook_deliveries
                   WHERE next_attempt_at <= $1 AND (claimed_at IS NULL OR claimed_at < $2)
                   ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [now, staleBefore],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** The bot answered, or was given up on: nothing is left to do. */
export async function finishDelivery(db: Queryable, id: number): Promise<void> {
  await db.query("DELETE FROM outgoing_webhook_deliveries WHERE id = $1", [id]);
}

/** Another attempt at `at`, by any process. */
export async function retryDelivery(db: Queryable, id: number, at: Date): Promise<void> {
  await db.query("UPDATE outgoing_webhook_deliveries SET claimed_at = NULL, next_attempt_at = $2 WHERE id = $1", [id, at]);
}
