import type { Queryable } from "@chat/platform";

/**
 * Up to `limit` of a topic's messages (its name compared case-insensitively), newest first,
 * locked; with `onlyOf` only those that user has a row for.
 */
export async function lockTopicBatch(
  db: Queryable,
  realmId: number,
  streamId: number,
  topic: string,
  limit: number,
  onlyOf: number | null,
): Promise<Array<{ id: number; topic: string }>> {
  const { rows } = await db.query(
    `SELECT m.id, m.topic FROM messages m
      WHERE m.realm_id = $1 AND m.stream_id = $2 AND lower(m.topic) = lower($3)
        AND ($5::bigint IS NULL OR EXISTS (SELECT 1 FROM usermessages um WHERE um.realm_id = $1 AND um.user_id = $5 AND um.message_id = m.id))
      ORDER BY m.id DESC LIMIT $4 FOR UPDATE OF m`,
    [realmId, streamId, topic, limit, onlyOf],
  );
  return rows.map((r) => ({ id: Number(r.id), topic: r.topic }));
}
