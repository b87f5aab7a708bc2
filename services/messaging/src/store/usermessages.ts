import type { Queryable } from "@chat/platform";
import { FLAG_BITS } from "../lib/flags";
import { byKey } from "./usermessages-read";

/**
 * One user's rows for several messages, where the user has none yet; returns the ids written.
 * A row another transaction wrote meanwhile is left as it is (ON CONFLICT waits for it).
 */
export async function insertOwnRowsIfAbsent(db: Queryable, realmId: number, userId: number, messageIds: number[], flags: number): Promise<number[]> {
  if (messageIds.length === 0) return [];
  const { rows } = await db.query(
    `INSERT INTO usermessages (realm_id, user_id, message_id, flags)
     SELECT $1, $2, m, $4 FROM unnest($3::bigint[]) AS x(m)
     ON CONFLICT (user_id, message_id) DO NOTHING RETURNING message_id`,
    [realmId, userId, messageIds, flags],
  );
  return rows.map((r) => Number(r.message_id));
}

/** A user's flag bits for these messages (only those they have a row for). */
export async function selectUserFlags(db: Queryable, realmId: number, userId: number, messageIds: number[]): Promise<Map<number, number>> {
  if (messageIds.length === 0) return new Map();
  const { rows } = await db.query(
    "SELECT message_id, flags FROM usermessages WHERE realm_id = $1 AND user_id = $2 AND message_id = ANY($3::bigint[])",
    [realmId, userId, messageIds],
  );
  return new Map(rows.map((r) => [Number(r.message_id), r.flags as number]));
}

export async function selectUserFlagsForUpdate(db: Queryable, realmId: number, userId: number, messageIds: number[]): Promise<Map<number, number>> {
  if (messageIds.length === 0) return new Map();
  const { rows } = await db.query(
    "SELECT message_id, flags FROM usermessages WHERE realm_id = $1 AND user_id = $2 AND message_id = ANY($3::bigint[]) FOR UPDATE",
    [realmId, userId, messageIds],
  );
  return new Map(rows.map((r) => [Number(r.message_id), r.flags as number]));
}

/** Sets (`add`) or clears (`remove`) `bit` on the given rows; returns the ids that changed. */
export async function updateFlagBit(db: Queryable, realmId: number, userId: number, messageIds: number[], bit: number, add: boolean): Promise<number[]> {
  if (messageIds.length === 0) return [];
  const { rows } = await db.query(
    add
      ? `UPDATE usermessages SET flags = flags | $4 WHERE realm_id = $1 AND user_id = $2 AND message_id = ANY($3::bigint[]) AND (flags & $4) = 0 RETURNING message_id`
      : `UPDATE usermessages SET flags = flags & ~$4 WHERE realm_id = $1 AND user_id = $2 AND message_id = ANY($3::bigint[]) AND (flags & $4) <> 0 RETURNING message_id`,
    [realmId, userId, messageIds, bit],
  );
  return rows.map((r) => Number(r.message_id)).sort((a, b) => a - b);
}

/** Marks a user's unread messages in these channels read; returns their ids, ascending. */
export async function markChannelsRead(db: Queryable, realmId: number, userId: number, streamIds: number[]): Promise<number[]> {
  if (streamIds.length === 0) return [];
  const { rows } = await db.query(
    `UPDATE usermessages um SET flags = um.flags | ${FLAG_BITS.read}
      WHERE um.realm_id = $1 AND um.user_id = $2 AND (um.flags & ${FLAG_BITS.read}) = 0
        AND ${byKey("m.stream_id = ANY($3::bigint[])")}
      RETURNING um.message_id`,
    [realmId, userId, streamIds],
  );
  return rows.map((r) => Number(r.message_id)).sort((a, b) => a - b);
}

/** Users holding a row for the message (who must hear of its deletion). */
export async function selectMessageUserIds(db: Queryable, realmId: number, messageId: number): Promise<number[]> {
  const { rows } = await db.query("SELECT user_id FROM usermessages WHERE realm_id = $1 AND message_id = $2 ORDER BY user_id", [realmId, messageId]);
  return rows.map((r) => Number(r.user_id));
}

export async function selectStarredIds(db: Queryable, realmId: number, userId: number): Promise<number[]> {
  const { rows } = await db.query(
    "SELECT message_id FROM usermessages WHERE realm_id = $1 AND user_id = $2 AND (flags & 2) <> 0 ORDER BY message_id",
    [realmId, userId],
  );
  return rows.map((r) => Number(r.message_id));
}

export interface UnreadRow {
  messageId: number;
  flags: number;
  senderId: number;
  recipientId: number;
  streamId: number | null;
  topic: string;
}

/**
 * The newest `limit` unread rows of a user, oldest first, leaving out channels the user left
 * (Zulip's get_raw_unread_data). The channels left are read once, before the rows: as a NOT
 * EXISTS per row it was a subscription lookup for every unread message, 40% of the statement's
 * pages (bench/README.md, round 19). Columns are spelled out so that it is prepared (preparedName).
 */
export async function selectUnread(db: Queryable, realmId: number, userId: number, limit: number): Promise<UnreadRow[]> {
  const { rows } = await db.query(
    `SELECT x.message_id, x.flags, x.sender_id, x.recipient_id, x.stream_id, x.topic FROM (
       SELECT um.message_id, um.flags, m.sender_id, m.recipient_id, m.stream_id, m.topic
         FROM usermessages um JOIN messages m ON m.id = um.message_id
        WHERE um.realm_id = $1 AND um.user_id = $2 AND (um.flags & 1) = 0
          AND (m.stream_id IS NULL OR m.stream_id <> ALL ((SELECT coalesce(array_agg(s.stream_id), '{}') FROM subscriptions s
                WHERE s.user_id = $2 AND s.realm_id = $1 AND NOT s.active)::bigint[]))
        ORDER BY um.message_id DESC LIMIT $3) x ORDER BY message_id`,
    [realmId, userId, limit],
  );
  return rows.map((r) => ({
    messageId: Number(r.message_id),
    flags: r.flags,
    senderId: Number(r.sender_id),
    recipientId: Number(r.recipient_id),
    streamId: r.stream_id === null ? null : Number(r.stream_id),
    topic: r.topic,
  }));
}

/** Direct conversations of a user with their newest message id. */
export async function selectRecentDirectConversations(db: Queryable, realmId: number, userId: number, limit: number): Promise<Array<{ key: string; maxId: number }>> {
  const { rows } = await db.query(
    `SELECT r.user_ids_key, max(x.message_id) AS max_id FROM (
        SELECT um.message_id FROM usermessages um
         WHERE um.realm_id = $1 AND um.user_id = $2 AND (um.flags & 256) <> 0
         ORDER BY um.message_id DESC LIMIT $3) x
       JOIN messages m ON m.id = x.message_id JOIN recipients r ON r.id = m.recipient_id
      GROUP BY r.user_ids_key ORDER BY max_id DESC`,
    [realmId, userId, limit],
  );
  return rows.map((r) => ({ key: r.user_ids_key, maxId: Number(r.max_id) }));
}

/** Every user's row for one message (user id and flag bits), locked for the caller's changes. */
export async function selectMessageRowsForUpdate(db: Queryable, realmId: number, messageId: number): Promise<Array<{ userId: number; flags: number }>> {
  const { rows } = await db.query(
    "SELECT user_id, flags FROM usermessages WHERE realm_id = $1 AND message_id = $2 ORDER BY user_id FOR UPDATE",
    [realmId, messageId],
  );
  return rows.map((r) => ({ userId: Number(r.user_id), flags: r.flags as number }));
}

/** Sets the flag bits of several users' rows for one message. */
export async function updateMessageFlags(db: Queryable, realmId: number, messageId: number, changes: Array<{ userId: number; flags: number }>): Promise<void> {
  if (changes.length === 0) return;
  await db.query(
    `UPDATE usermessages um SET flags = x.f FROM unnest($3::bigint[], $4::int[]) AS x(u, f)
      WHERE um.realm_id = $1 AND um.message_id = $2 AND um.user_id = x.u`,
    [realmId, messageId, changes.map((c) => c.userId), changes.map((c) => c.flags)],
  );
}

/** Removes these users' rows for these messages. */
export async function deleteUsersMessageRows(db: Queryable, realmId: number, userIds: number[], messageIds: number[]): Promise<void> {
  if (userIds.length === 0 || messageIds.length === 0) return;
  await db.query(
    "DELETE FROM usermessages WHERE realm_id = $1 AND user_id = ANY($2::bigint[]) AND message_id = ANY($3::bigint[])",
    [realmId, userIds, messageIds],
  );
}

/** Gives these users a row with `flags` for each of these messages, where they have none. */
export async function insertUsersMessageRows(db: Queryable, realmId: number, userIds: number[], messageIds: number[], flags: number): Promise<void> {
  if (userIds.length === 0 || messageIds.length === 0) return;
  await db.query(
    `INSERT INTO usermessages (realm_id, user_id, message_id, flags)
     SELECT $1, u, m, $4 FROM unnest($2::bigint[]) AS u CROSS JOIN unnest($3::bigint[]) AS m
     ON CONFLICT (user_id, message_id) DO NOTHING`,
    [realmId, userIds, messageIds, flags],
  );
}
