import type { Queryable } from "@chat/platform";
import { FLAG_BITS } from "../lib/flags";
import { byKey } from "./usermessages-read";

/** The users a user has muted, as replicated, locked for a change (empty before the first). */
export async function selectMutedUserIdsForUpdate(db: Queryable, realmId: number, userId: number): Promise<number[]> {
  const { rows } = await db.query("SELECT muted_user_ids FROM muted_users WHERE realm_id = $1 AND user_id = $2 FOR UPDATE", [realmId, userId]);
  return rows[0] ? (rows[0].muted_user_ids as Array<string | number>).map(Number) : [];
}

/** Replaces a user's replicated mute list unless a newer version is stored; whether it did. */
export async function upsertMutedUsers(db: Queryable, realmId: number, userId: number, mutedUserIds: number[], version: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO muted_users (user_id, realm_id, muted_user_ids, version) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id) DO UPDATE SET muted_user_ids = EXCLUDED.muted_user_ids, version = EXCLUDED.version
     WHERE muted_users.version < EXCLUDED.version`,
    [userId, realmId, mutedUserIds, version],
  );
  return (rowCount ?? 0) > 0;
}

/** Which of `userIds` have muted `senderId`. */
export async function selectMutingUsers(db: Queryable, realmId: number, senderId: number, userIds: number[]): Promise<Set<number>> {
  if (!userIds.length) return new Set();
  const { rows } = await db.query(
    "SELECT user_id FROM muted_users WHERE realm_id = $1 AND muted_user_ids @> ARRAY[$2::bigint] AND user_id = ANY($3::bigint[])",
    [realmId, senderId, userIds],
  );
  return new Set(rows.map((r) => Number(r.user_id)));
}

/** Sets the read bit on the user's unread messages sent by these users; returns their ids, ascending. */
export async function markSendersMessagesRead(db: Queryable, realmId: number, userId: number, senderIds: number[]): Promise<number[]> {
  if (!senderIds.length) return [];
  const { rows } = await db.query(
    `UPDATE usermessages um SET flags = um.flags | ${FLAG_BITS.read}
      WHERE um.realm_id = $1 AND um.user_id = $2 AND (um.flags & ${FLAG_BITS.read}) = 0
        AND ${byKey("m.sender_id = ANY($3::bigint[])")}
      RETURNING um.message_id`,
    [realmId, userId, senderIds],
  );
  return rows.map((r) => Number(r.message_id)).sort((a, b) => a - b);
}

/**
 * Users the user muted and users who muted the user: whose read receipts Zulip hides from the
 * user (feature level 143), and to whom the user's are hidden.
 */
export async function selectMuteRelatedUserIds(db: Queryable, realmId: number, userId: number): Promise<Set<number>> {
  const { rows } = await db.query(
    `SELECT unnest(muted_user_ids) AS id FROM muted_users WHERE realm_id = $1 AND user_id = $2
     UNION SELECT user_id FROM muted_users WHERE realm_id = $1 AND muted_user_ids @> ARRAY[$2::bigint]`,
    [realmId, userId],
  );
  return new Set(rows.map((r) => Number(r.id)));
}
