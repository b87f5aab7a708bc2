import type { Queryable } from "@chat/platform";

export const PUSH_KIND = { apns: 1, gcm: 2 } as const;

export async function insertToken(db: Queryable, realmId: number, userId: number, kind: number, token: string, appId: string | null, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO push_device_tokens (realm_id, user_id, kind, token, ios_app_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (user_id, kind, token) DO UPDATE SET ios_app_id = EXCLUDED.ios_app_id`,
    [realmId, userId, kind, token, appId, now],
  );
}

export async function deleteToken(db: Queryable, realmId: number, userId: number, kind: number, token: string): Promise<boolean> {
  const { rowCount } = await db.query(
    "DELETE FROM push_device_tokens WHERE realm_id = $1 AND user_id = $2 AND kind = $3 AND token = $4",
    [realmId, userId, kind, token],
  );
  return (rowCount ?? 0) > 0;
}

export async function deleteAllTokens(db: Queryable, realmId: number, userId: number): Promise<void> {
  await db.query("DELETE FROM push_device_tokens WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
}

export async function countTokens(db: Queryable, realmId: number, userId: number): Promise<number> {
  const { rows } = await db.query("SELECT count(*)::int AS n FROM push_device_tokens WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
  return rows[0].n;
}

/** The user's registered device tokens of any kind, or only those equal to `token`. */
export async function countUserTokens(db: Queryable, realmId: number, userId: number, token: string | null): Promise<number> {
  const { rows } = await db.query(
    "SELECT count(*)::int AS n FROM push_device_tokens WHERE realm_id = $1 AND user_id = $2 AND ($3::text IS NULL OR token = $3)",
    [realmId, userId, token],
  );
  return rows[0].n;
}
