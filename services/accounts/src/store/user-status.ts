import type { Queryable } from "@chat/platform";

export interface UserStatusRow {
  userId: number;
  statusText: string;
  emojiName: string;
  emojiCode: string;
  reactionType: string;
  /** Inverse of the user's presence_enabled setting. */
  away: boolean;
}

function toStatus(r: any): UserStatusRow {
  return {
    userId: r.user_id,
    statusText: r.status_text ?? "",
    emojiName: r.emoji_name ?? "",
    emojiCode: r.emoji_code ?? "",
    reactionType: r.reaction_type ?? "unicode_emoji",
    away: !r.presence_enabled,
  };
}

/**
 * The user's status row, null when they never set one: then there is no `away` either, whatever
 * presence_enabled says (Zulip reads the status row; register's listStatuses does the same).
 */
export async function getStatus(db: Queryable, realmId: number, userId: number): Promise<UserStatusRow | null> {
  const { rows } = await db.query(
    `SELECT u.id AS user_id, u.presence_enabled, s.status_text, s.emoji_name, s.emoji_code, s.reaction_type
       FROM users u JOIN user_status s ON s.user_id = u.id WHERE u.realm_id = $1 AND u.id = $2`,
    [realmId, userId],
  );
  return rows[0] ? toStatus(rows[0]) : null;
}

/**
 * Active users with any non-default status (register's user_status; only those among `userIds`
 * when given). Read from the statuses, each one's user looked up by key: joined the other way, a
 * plan made while the tables were small read every user of the organization on every register,
 * for the few who set a status. The lookup is kept a lookup (OFFSET 0: PostgreSQL may not fold it
 * into a join it could turn around) by the key alone (with the organization beside the id, a
 * small table's plan went by (realm_id, email) instead).
 */
export async function listStatuses(db: Queryable, realmId: number, userIds?: number[]): Promise<UserStatusRow[]> {
  const params: unknown[] = [realmId];
  const among = userIds === undefined ? "" : ` AND s.user_id = ANY($${params.push(userIds)}::bigint[])`;
  const { rows } = await db.query(
    `SELECT s.user_id, u.presence_enabled, s.status_text, s.emoji_name, s.emoji_code, s.reaction_type
       FROM user_status s
       CROSS JOIN LATERAL (SELECT realm_id, is_active, presence_enabled FROM users WHERE id = s.user_id OFFSET 0) u
      WHERE s.realm_id = $1${among} AND u.realm_id = $1 AND u.is_active AND (NOT u.presence_enabled OR s.status_text <> '' OR s.emoji_name <> '')
      ORDER BY s.user_id`,
    params,
  );
  return rows.map(toStatus);
}

/** Writes only the given fields (others keep their value). */
export async function upsertStatus(
  db: Queryable,
  realmId: number,
  userId: number,
  fields: { statusText?: string; emojiName?: string; emojiCode?: string; reactionType?: string },
  now: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO user_status (realm_id, user_id, status_text, emoji_name, emoji_code, reaction_type, updated_at)
     VALUES ($1, $2, COALESCE($3, ''), COALESCE($4, ''), COALESCE($5, ''), COALESCE($6, 'unicode_emoji'), $7)
     ON CONFLICT (user_id) DO UPDATE SET
       status_text = COALESCE($3, user_status.status_text),
       emoji_name = COALESCE($4, user_status.emoji_name),
       emoji_code = COALESCE($5, user_status.emoji_code),
       reaction_type = COALESCE($6, user_status.reaction_type),
       updated_at = $7`,
    [realmId, userId, fields.statusText ?? null, fields.emojiName ?? null, fields.emojiCode ?? null, fields.reactionType ?? null, now],
  );
}
