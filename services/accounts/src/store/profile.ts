import type { Queryable } from "@chat/platform";
import { toUser, type UserRow } from "./users";

/** Column updates of one user, by the profile and settings actions. Returns nothing: callers re-read the row. */
export async function setFullName(db: Queryable, realmId: number, userId: number, fullName: string): Promise<void> {
  await db.query("UPDATE users SET full_name = $3 WHERE realm_id = $1 AND id = $2", [realmId, userId, fullName]);
}

export async function setTimezone(db: Queryable, realmId: number, userId: number, timezone: string): Promise<void> {
  await db.query("UPDATE users SET timezone = $3 WHERE realm_id = $1 AND id = $2", [realmId, userId, timezone]);
}

export async function setRole(db: Queryable, realmId: number, userId: number, role: number): Promise<void> {
  await db.query("UPDATE users SET role = $3 WHERE realm_id = $1 AND id = $2", [realmId, userId, role]);
}

export async function setBillingAdmin(db: Queryable, realmId: number, userId: number, value: boolean): Promise<void> {
  await db.query("UPDATE users SET is_billing_admin = $3 WHERE realm_id = $1 AND id = $2", [realmId, userId, value]);
}

export async function setCanCreateUsers(db: Queryable, realmId: number, userId: number, value: boolean): Promise<void> {
  await db.query("UPDATE users SET can_create_users = $3 WHERE realm_id = $1 AND id = $2", [realmId, userId, value]);
}

export async function selectCanCreateUsers(db: Queryable, realmId: number, userId: number): Promise<boolean> {
  const { rows } = await db.query("SELECT can_create_users FROM users WHERE realm_id = $1 AND id = $2", [realmId, userId]);
  return rows[0]?.can_create_users === true;
}

export async function setApiEmail(db: Queryable, realmId: number, userId: number, email: string): Promise<void> {
  await db.query("UPDATE users SET email = $3 WHERE realm_id = $1 AND id = $2", [realmId, userId, email]);
}

export async function setBotOwner(db: Queryable, realmId: number, botId: number, ownerId: number): Promise<void> {
  await db.query("UPDATE users SET bot_owner_id = $3 WHERE realm_id = $1 AND id = $2 AND is_bot", [realmId, botId, ownerId]);
}

export async function setPasswordHash(db: Queryable, realmId: number, userId: number, hash: string): Promise<void> {
  await db.query("UPDATE users SET password_hash = $3 WHERE realm_id = $1 AND id = $2", [realmId, userId, hash]);
}

/** Points the user at a new avatar (or back at Gravatar with a null token) and bumps the version. */
export async function setAvatar(db: Queryable, realmId: number, userId: number, source: "G" | "U", token: string | null): Promise<void> {
  await db.query(
    "UPDATE users SET avatar_source = $3, avatar_token = $4, avatar_version = avatar_version + 1 WHERE realm_id = $1 AND id = $2",
    [realmId, userId, source, token],
  );
}

export async function upsertAvatarImage(db: Queryable, realmId: number, userId: number, token: string, contentType: string, data: Buffer): Promise<void> {
  await db.query(
    `INSERT INTO avatars (user_id, realm_id, token, content_type, data) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (user_id) DO UPDATE SET token = EXCLUDED.token, content_type = EXCLUDED.content_type, data = EXCLUDED.data`,
    [userId, realmId, token, contentType, data],
  );
}

export async function deleteAvatarImage(db: Queryable, realmId: number, userId: number): Promise<void> {
  await db.query("DELETE FROM avatars WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
}

export async function getAvatarImage(db: Queryable, realmId: number, token: string): Promise<{ contentType: string; data: Buffer } | null> {
  const { rows } = await db.query("SELECT content_type, data FROM avatars WHERE realm_id = $1 AND token = $2", [realmId, token]);
  return rows[0] ? { contentType: rows[0].content_type, data: rows[0].data } : null;
}

/** Every bot of a realm (system bots excepted), or only those owned by `ownerId`. */
export async function listBotIds(db: Queryable, realmId: number, ownerId: number | null): Promise<number[]> {
  const { rows } = await db.query(
    "SELECT id FROM users WHERE realm_id = $1 AND is_bot AND NOT is_system_bot AND ($2::bigint IS NULL OR bot_owner_id = $2) ORDER BY id",
    [realmId, ownerId],
  );
  return rows.map((r) => Number(r.id));
}

/** The bots of `listBotIds`, deactivated ones too, as rows (by id). */
export async function listBots(db: Queryable, realmId: number, ownerId: number | null): Promise<ProfileUser[]> {
  const { rows } = await db.query(
    "SELECT * FROM users WHERE realm_id = $1 AND is_bot AND NOT is_system_bot AND ($2::bigint IS NULL OR bot_owner_id = $2) ORDER BY id",
    [realmId, ownerId],
  );
  return rows.map(toProfileUser);
}

/** A users row with the columns this issue added (avatar, billing role). */
export type ProfileUser = UserRow & { avatarSource: "G" | "U"; avatarToken: string | null; isBillingAdmin: boolean };

export function toProfileUser(r: any): ProfileUser {
  return { ...toUser(r), avatarSource: r.avatar_source, avatarToken: r.avatar_token, isBillingAdmin: r.is_billing_admin };
}

export async function getProfileUser(db: Queryable, realmId: number, userId: number, opts: { lock?: boolean } = {}): Promise<ProfileUser | null> {
  const { rows } = await db.query(`SELECT * FROM users WHERE realm_id = $1 AND id = $2${opts.lock ? " FOR UPDATE" : ""}`, [realmId, userId]);
  return rows[0] ? toProfileUser(rows[0]) : null;
}

export async function listProfileUsers(db: Queryable, realmId: number, userIds: number[]): Promise<ProfileUser[]> {
  const { rows } = await db.query("SELECT * FROM users WHERE realm_id = $1 AND id = ANY($2::bigint[]) ORDER BY id", [realmId, userIds]);
  return rows.map(toProfileUser);
}
