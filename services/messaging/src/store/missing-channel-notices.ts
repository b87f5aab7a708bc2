import type { Queryable } from "@chat/platform";

/**
 * Takes the missing-channel notice for the key's user (a bot, or a person): true unless one was
 * sent after `since` (by another request or replica too: the row's update is the claim).
 */
export async function claimMissingChannelNotice(db: Queryable, realmId: number, userId: number, now: Date, since: Date): Promise<boolean> {
  const { rows } = await db.query(
    `INSERT INTO missing_channel_notices (user_id, realm_id, sent_at) VALUES ($1, $2, $3)
     ON CONFLICT (user_id) DO UPDATE SET realm_id = EXCLUDED.realm_id, sent_at = EXCLUDED.sent_at
       WHERE missing_channel_notices.sent_at <= $4
     RETURNING user_id`,
    [userId, realmId, now, since],
  );
  return rows.length > 0;
}
