import type { Queryable } from "@chat/platform";

/** Realms that have channels or conversations (the retention job visits each). */
export async function selectRealmsWithMessages(db: Queryable): Promise<number[]> {
  const { rows } = await db.query("SELECT DISTINCT realm_id FROM recipients ORDER BY realm_id");
  return rows.map((r) => Number(r.realm_id));
}

/** A realm's channels with their own retention (null inherits the organization's). */
export async function selectStreamRetention(db: Queryable, realmId: number): Promise<Array<{ id: number; days: number | null }>> {
  const { rows } = await db.query("SELECT id, message_retention_days FROM streams WHERE realm_id = $1 ORDER BY id", [realmId]);
  return rows.map((r) => ({ id: Number(r.id), days: r.message_retention_days }));
}

export interface ExpiredRow {
  id: number;
  streamId: number | null;
  topic: string;
  recipientId: number;
}

/**
 * Locks the oldest messages sent before `cutoff` in one channel (or, with a null channel, the
 * realm's direct messages). SKIP LOCKED: concurrent runs split the work instead of waiting.
 */
export async function lockExpiredMessages(db: Queryable, realmId: number, streamId: number | null, cutoff: Date, limit: number): Promise<ExpiredRow[]> {
  const where = streamId === null ? "stream_id IS NULL" : "stream_id = $4";
  const { rows } = await db.query(
    `SELECT id, stream_id, topic, recipient_id FROM messages
      WHERE realm_id = $1 AND ${where} AND date_sent < $2
      ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED`,
    streamId === null ? [realmId, cutoff, limit] : [realmId, cutoff, limit, streamId],
  );
  return rows.map((r) => ({ id: Number(r.id), streamId: r.stream_id === null ? null : Number(r.stream_id), topic: r.topic, recipientId: Number(r.recipient_id) }));
}

/** Who received each of these messages (the audience of their deletion). */
export async function selectReceivers(db: Queryable, realmId: number, messageIds: number[]): Promise<Map<number, number[]>> {
  const { rows } = await db.query(
    "SELECT message_id, user_id FROM usermessages WHERE realm_id = $1 AND message_id = ANY($2::bigint[]) ORDER BY user_id",
    [realmId, messageIds],
  );
  const out = new Map<number, number[]>();
  for (const r of rows) out.set(Number(r.message_id), [...(out.get(Number(r.message_id)) ?? []), Number(r.user_id)]);
  return out;
}

/** Deletes messages (their usermessage rows go with them). */
export async function deleteMessages(db: Queryable, realmId: number, messageIds: number[]): Promise<void> {
  await db.query("DELETE FROM messages WHERE realm_id = $1 AND id = ANY($2::bigint[])", [realmId, messageIds]);
}
