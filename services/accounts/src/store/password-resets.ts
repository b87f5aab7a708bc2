import type { Queryable } from "@chat/platform";
import { toUser, type UserRow } from "./users";

/** A password reset link's row (see the password-resets migration). */
export interface PasswordResetKeyRow {
  id: number;
  realmId: number;
  userId: number;
  expiresAt: Date;
}

const toResetKey = (r: any): PasswordResetKeyRow => ({ id: Number(r.id), realmId: Number(r.realm_id), userId: Number(r.user_id), expiresAt: r.expires_at });

export async function insertPasswordResetKey(
  db: Queryable,
  k: { realmId: number; userId: number; keyHash: string; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await db.query("INSERT INTO password_reset_keys (realm_id, user_id, key_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)", [
    k.realmId,
    k.userId,
    k.keyHash,
    k.createdAt,
    k.expiresAt,
  ]);
}

const USABLE_BY_KEY = "SELECT * FROM password_reset_keys WHERE key_hash = $1 AND used_at IS NULL AND expires_at > $2";

/** The link of a key hash, unless used or expired. */
export async function getUsablePasswordResetKey(db: Queryable, keyHash: string, now: Date): Promise<PasswordResetKeyRow | null> {
  const { rows } = await db.query(USABLE_BY_KEY, [keyHash, now]);
  return rows[0] ? toResetKey(rows[0]) : null;
}

/** The same, locked for setting the password (two submissions of one link: one wins). */
export async function lockUsablePasswordResetKey(db: Queryable, keyHash: string, now: Date): Promise<PasswordResetKeyRow | null> {
  const { rows } = await db.query(`${USABLE_BY_KEY} FOR UPDATE`, [keyHash, now]);
  return rows[0] ? toResetKey(rows[0]) : null;
}

/** Uses up every outstanding link of the user. */
export async function usePasswordResetKeys(db: Queryable, realmId: number, userId: number, now: Date): Promise<void> {
  await db.query("UPDATE password_reset_keys SET used_at = $3 WHERE realm_id = $1 AND user_id = $2 AND used_at IS NULL", [realmId, userId, now]);
}

export async function deleteExpiredPasswordResetKeys(db: Queryable, now: Date): Promise<void> {
  await db.query("DELETE FROM password_reset_keys WHERE expires_at <= $1", [now]);
}

export async function countPasswordResetRequestsSince(db: Queryable, emailHash: string, since: Date): Promise<number> {
  const { rows } = await db.query("SELECT count(*)::int AS n FROM password_reset_requests WHERE email_hash = $1 AND requested_at > $2", [emailHash, since]);
  return rows[0].n;
}

export async function insertPasswordResetRequest(db: Queryable, emailHash: string, at: Date): Promise<void> {
  await db.query("INSERT INTO password_reset_requests (email_hash, requested_at) VALUES ($1, $2)", [emailHash, at]);
}

export async function deletePasswordResetRequestsBefore(db: Queryable, before: Date): Promise<void> {
  await db.query("DELETE FROM password_reset_requests WHERE requested_at <= $1", [before]);
}

/** Every user (any state, bots too) whose delivery address is `email`, case-insensitively; of one realm when given. */
export async function getUsersByDeliveryEmailAnywhere(db: Queryable, email: string, realmId: number | null): Promise<UserRow[]> {
  const { rows } = await db.query("SELECT * FROM users WHERE lower(delivery_email) = lower($1) AND ($2::bigint IS NULL OR realm_id = $2) ORDER BY id", [
    email,
    realmId,
  ]);
  return rows.map(toUser);
}

/**
 * Forgets the copies of the user's keys sealed under the old password (see sealApiKey): a reset
 * cannot seal them again without the key, and whoever knew the old password must not open them.
 * The keys themselves keep working.
 */
export async function forgetSealedApiKeys(db: Queryable, realmId: number, userId: number): Promise<void> {
  await db.query("UPDATE api_keys SET sealed = NULL WHERE realm_id = $1 AND user_id = $2 AND sealed IS NOT NULL", [realmId, userId]);
}
