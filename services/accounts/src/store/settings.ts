import type { Queryable } from "@chat/platform";
import type { SettingValue } from "../lib/user-settings";

export type StoredSettings = Record<string, SettingValue>;

/** A user's settings that differ from the built-in defaults ({} when the user has no row). */
export async function getUserSettingsRow(db: Queryable, realmId: number, userId: number): Promise<StoredSettings> {
  const { rows } = await db.query("SELECT settings FROM user_settings WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
  return rows[0]?.settings ?? {};
}

/** Stored settings of several users (users without a row are absent: they have the defaults). */
export async function getUserSettingsRows(db: Queryable, realmId: number, userIds: number[]): Promise<Map<number, StoredSettings>> {
  const { rows } = await db.query("SELECT user_id, settings FROM user_settings WHERE realm_id = $1 AND user_id = ANY($2::bigint[])", [realmId, userIds]);
  return new Map(rows.map((r) => [Number(r.user_id), r.settings]));
}

/** Locks the user's row (creating an empty one first) so concurrent changes apply one after the other. */
export async function lockUserSettingsRow(db: Queryable, realmId: number, userId: number): Promise<StoredSettings> {
  await db.query("INSERT INTO user_settings (user_id, realm_id) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING", [userId, realmId]);
  const { rows } = await db.query("SELECT settings FROM user_settings WHERE realm_id = $1 AND user_id = $2 FOR UPDATE", [realmId, userId]);
  return rows[0].settings;
}

export async function saveUserSettingsRow(db: Queryable, realmId: number, userId: number, settings: StoredSettings): Promise<void> {
  await db.query(
    `INSERT INTO user_settings (user_id, realm_id, settings) VALUES ($1, $2, $3)
     ON CONFLICT (user_id) DO UPDATE SET settings = EXCLUDED.settings`,
    [userId, realmId, settings],
  );
}

/** One setting of some users, where stored (users without it have the default). */
export async function settingOfUsers(db: Queryable, realmId: number, userIds: number[], name: string): Promise<Map<number, SettingValue>> {
  if (userIds.length === 0) return new Map();
  const { rows } = await db.query(
    "SELECT user_id, settings -> $3 AS value FROM user_settings WHERE realm_id = $1 AND user_id = ANY($2::bigint[]) AND settings ? $3",
    [realmId, userIds, name],
  );
  return new Map(rows.map((r) => [Number(r.user_id), r.value]));
}

/** One setting of every user of a realm that has it stored (users without it have the default). */
export async function settingOfRealmUsers(db: Queryable, realmId: number, name: string): Promise<Map<number, SettingValue>> {
  const { rows } = await db.query(
    "SELECT user_id, settings -> $2 AS value FROM user_settings WHERE realm_id = $1 AND settings ? $2",
    [realmId, name],
  );
  return new Map(rows.map((r) => [Number(r.user_id), r.value]));
}

export async function getRealmDefaultsRow(db: Queryable, realmId: number): Promise<StoredSettings> {
  const { rows } = await db.query("SELECT settings FROM realm_user_settings_defaults WHERE realm_id = $1", [realmId]);
  return rows[0]?.settings ?? {};
}

export async function lockRealmDefaultsRow(db: Queryable, realmId: number): Promise<StoredSettings> {
  await db.query("INSERT INTO realm_user_settings_defaults (realm_id) VALUES ($1) ON CONFLICT (realm_id) DO NOTHING", [realmId]);
  const { rows } = await db.query("SELECT settings FROM realm_user_settings_defaults WHERE realm_id = $1 FOR UPDATE", [realmId]);
  return rows[0].settings;
}

export async function saveRealmDefaultsRow(db: Queryable, realmId: number, settings: StoredSettings): Promise<void> {
  await db.query(
    `INSERT INTO realm_user_settings_defaults (realm_id, settings) VALUES ($1, $2)
     ON CONFLICT (realm_id) DO UPDATE SET settings = EXCLUDED.settings`,
    [realmId, settings],
  );
}
