import type { Queryable } from "@chat/platform";

export type StoredUserSettings = Record<string, unknown>;

/** The replicated settings of some users of a realm (users never seen are absent). */
export async function selectUserSettings(db: Queryable, realmId: number, userIds: number[]): Promise<Map<number, StoredUserSettings>> {
  if (userIds.length === 0) return new Map();
  const { rows } = await db.query("SELECT user_id, settings FROM user_settings WHERE realm_id = $1 AND user_id = ANY($2::bigint[])", [realmId, userIds]);
  return new Map(rows.map((r) => [Number(r.user_id), r.settings as StoredUserSettings]));
}

/** A change announced by accounts: it replaces whatever value was known. */
export async function setUserSetting(db: Queryable, realmId: number, userId: number, name: string, value: unknown): Promise<void> {
  await db.query(
    `INSERT INTO user_settings (user_id, realm_id, settings) VALUES ($1, $2, jsonb_build_object($3::text, $4::jsonb))
     ON CONFLICT (user_id) DO UPDATE SET settings = user_settings.settings || EXCLUDED.settings`,
    [userId, realmId, name, JSON.stringify(value)],
  );
}

/**
 * Values read through from accounts fill only the names still missing: an event applied in the
 * meantime carries a newer value than a read that started before it.
 */
export async function fillUserSettings(db: Queryable, realmId: number, userId: number, settings: StoredUserSettings): Promise<void> {
  await db.query(
    `INSERT INTO user_settings (user_id, realm_id, settings) VALUES ($1, $2, $3::jsonb)
     ON CONFLICT (user_id) DO UPDATE SET settings = EXCLUDED.settings || user_settings.settings`,
    [userId, realmId, JSON.stringify(settings)],
  );
}
