import type { Queryable } from "@chat/platform";
import { FLAG_BITS } from "../lib/flags";

/** Which of a user's messages: all, one channel's, or one topic's of a channel (case-insensitive). */
export type ReadScope = { streamId?: number; topic?: string };

/**
 * Sets the read bit on the user's unread rows in scope; returns the ids that changed, ascending.
 * One statement, so that the rows are locked as they are changed.
 */
export async function markUnreadRowsRead(db: Queryable, realmId: number, userId: number, scope: ReadScope): Promise<number[]> {
  const params: unknown[] = [realmId, userId];
  let inScope = "";
  if (scope.streamId !== undefined) {
    params.push(scope.streamId);
    let test = `m.stream_id = $${params.length}`;
    if (scope.topic !== undefined) {
      params.push(scope.topic);
      test += ` AND lower(m.topic) = lower($${params.length})`;
    }
    inScope = ` AND ${byKey(test)}`;
  }
  const { rows } = await db.query(
    `UPDATE usermessages um SET flags = um.flags | ${FLAG_BITS.read}
      WHERE um.realm_id = $1 AND um.user_id = $2 AND (um.flags & ${FLAG_BITS.read}) = 0${inScope}
      RETURNING um.message_id`,
    params,
  );
  return rows.map((r) => Number(r.message_id)).sort((a, b) => a - b);
}

/**
 * `test` of the unread row's message (`um`; the statement's $1 is the organization), as a scalar
 * subquery that looks the message up by its key once per row. PostgreSQL cannot turn it into a join that rescans the channel's or topic's
 * messages for every row (which it did, with statistics from when the tables were small), and
 * with the organization checked in the result rather than the lookup, no other index can serve
 * it (with `realm_id = $1` beside the id, a plan made on small tables walked the organization's
 * entries in (realm_id, sender_id, id) for every row). The unread bit is written into the text
 * for the same reason: a parameter there hides the unread index from plans made for any value.
 */
export function byKey(test: string): string {
  return `(SELECT m.realm_id = $1 AND ${test} FROM messages m WHERE m.id = um.message_id)`;
}

/** Whether the user has any message (read or not) in the topic of the channel, case-insensitively. */
export async function hasRowsInTopic(db: Queryable, realmId: number, userId: number, streamId: number, topic: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM usermessages um JOIN messages m ON m.id = um.message_id
      WHERE um.realm_id = $1 AND um.user_id = $2 AND m.realm_id = $1 AND m.stream_id = $3 AND lower(m.topic) = lower($4)
      LIMIT 1`,
    [realmId, userId, streamId, topic],
  );
  return rows.length > 0;
}

/** Users other than `exceptUserId` whose row for the message has the read bit, ascending. */
export async function selectReaderIds(db: Queryable, realmId: number, messageId: number, exceptUserId: number): Promise<number[]> {
  const { rows } = await db.query(
    "SELECT user_id FROM usermessages WHERE realm_id = $1 AND message_id = $2 AND user_id <> $3 AND (flags & $4) <> 0 ORDER BY user_id",
    [realmId, messageId, exceptUserId, FLAG_BITS.read],
  );
  return rows.map((r) => Number(r.user_id));
}
