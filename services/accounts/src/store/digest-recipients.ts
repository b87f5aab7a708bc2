import type { Queryable } from "@chat/platform";

/** An inactive user of an organization whose digest day it is (messaging's digest emails). */
export interface DigestRecipientRow {
  realmId: number;
  userId: number;
  deliveryEmail: string;
  fullName: string;
  role: number;
  lastActive: Date | null;
}

/**
 * Active humans of the active organizations with digests on `weekday`, whose effective
 * `enable_digest_emails` is true (`digestDefault` when they never changed it) and who were not
 * active since `inactiveSince`: the first `limit` by id after `afterUserId`.
 */
export async function selectDigestRecipients(
  db: Queryable,
  q: { weekday: number; inactiveSince: Date; digestDefault: boolean; afterUserId: number; limit: number },
): Promise<DigestRecipientRow[]> {
  const { rows } = await db.query(
    `SELECT u.realm_id, u.id, u.delivery_email, u.full_name, u.role, p.last_active_time
       FROM realms r
       JOIN users u ON u.realm_id = r.id
       LEFT JOIN user_settings s ON s.user_id = u.id
       LEFT JOIN user_presence p ON p.user_id = u.id
      WHERE r.digest_emails_enabled AND r.digest_weekday = $1 AND NOT r.deactivated
        AND u.is_active AND NOT u.is_bot AND u.id > $4
        AND coalesce((s.settings ->> 'enable_digest_emails')::boolean, $3)
        AND (p.last_active_time IS NULL OR p.last_active_time < $2)
      ORDER BY u.id
      LIMIT $5`,
    [q.weekday, q.inactiveSince, q.digestDefault, q.afterUserId, q.limit],
  );
  return rows.map((r) => ({
    realmId: Number(r.realm_id),
    userId: Number(r.id),
    deliveryEmail: r.delivery_email,
    fullName: r.full_name,
    role: Number(r.role),
    lastActive: r.last_active_time ?? null,
  }));
}

/**
 * Active humans of the given organizations who joined since `since`, earliest first (by the
 * index on users (realm_id, date_joined)).
 */
export async function selectRecentJoins(db: Queryable, realmIds: number[], since: Date): Promise<Array<{ realmId: number; userId: number; dateJoined: Date }>> {
  if (realmIds.length === 0) return [];
  const { rows } = await db.query(
    `SELECT realm_id, id, date_joined FROM users
      WHERE realm_id = ANY($1::bigint[]) AND date_joined >= $2 AND is_active AND NOT is_bot
      ORDER BY realm_id, date_joined, id`,
    [realmIds, since],
  );
  return rows.map((r) => ({ realmId: Number(r.realm_id), userId: Number(r.id), dateJoined: r.date_joined }));
}

/** The user list versions of the given organizations (see user_list_versions); "0" where none moved yet. */
export async function selectUserListVersions(db: Queryable, realmIds: number[]): Promise<Map<number, string>> {
  const versions = new Map(realmIds.map((id) => [id, "0"]));
  if (realmIds.length === 0) return versions;
  const { rows } = await db.query("SELECT realm_id, version FROM user_list_versions WHERE realm_id = ANY($1::bigint[])", [realmIds]);
  for (const r of rows) versions.set(Number(r.realm_id), String(r.version));
  return versions;
}
