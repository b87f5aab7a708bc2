import type { Queryable } from "@chat/platform";

export interface ApiKeyCandidate {
  userId: number;
  keyHash: string;
}

/** A new key of the user; `sealed` is its copy sealed under the password (logins only, see sealApiKey). */
export async function insertApiKey(db: Queryable, realmId: number, userId: number, keyHash: string, sealed: string | null = null): Promise<void> {
  await db.query("INSERT INTO api_keys (realm_id, user_id, key_hash, sealed) VALUES ($1, $2, $3, $4)", [realmId, userId, keyHash, sealed]);
}

/** The user's newest key that a login sealed, if it still exists (a key reset deletes it). */
export async function newestSealedKey(db: Queryable, realmId: number, userId: number): Promise<{ id: number; sealed: string } | null> {
  const { rows } = await db.query(
    "SELECT id, sealed FROM api_keys WHERE realm_id = $1 AND user_id = $2 AND sealed IS NOT NULL ORDER BY id DESC LIMIT 1",
    [realmId, userId],
  );
  return rows[0] ? { id: Number(rows[0].id), sealed: rows[0].sealed } : null;
}

/** Seals a key again (under a new password); nothing when a key reset removed it meanwhile. */
export async function resealApiKey(db: Queryable, realmId: number, id: number, sealed: string): Promise<void> {
  await db.query("UPDATE api_keys SET sealed = $3 WHERE realm_id = $1 AND id = $2", [realmId, id, sealed]);
}

export async function deleteApiKeys(db: Queryable, realmId: number, userId: number): Promise<void> {
  await db.query("DELETE FROM api_keys WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
}

/** Keeps only the newest `keep` keys of a user (each client login adds one). */
export async function pruneApiKeys(db: Queryable, realmId: number, userId: number, keep: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM api_keys WHERE realm_id = $1 AND user_id = $2 AND id NOT IN (
       SELECT id FROM api_keys WHERE realm_id = $1 AND user_id = $2 ORDER BY id DESC LIMIT $3)`,
    [realmId, userId, keep],
  );
  return rowCount ?? 0;
}

/** The user whose key has this hash (a key is 190 random bits, so at most one), or null. */
export async function selectKeyOwner(db: Queryable, keyHash: string): Promise<{ realmId: number; userId: number } | null> {
  const { rows } = await db.query("SELECT realm_id, user_id FROM api_keys WHERE key_hash = $1 LIMIT 1", [keyHash]);
  return rows[0] ? { realmId: Number(rows[0].realm_id), userId: Number(rows[0].user_id) } : null;
}

/** Key hashes of the given users, for the constant-time comparison done by the caller. */
export async function keyHashesOf(db: Queryable, userIds: number[]): Promise<ApiKeyCandidate[]> {
  const { rows } = await db.query("SELECT user_id, key_hash FROM api_keys WHERE user_id = ANY($1::bigint[])", [userIds]);
  return rows.map((r) => ({ userId: r.user_id, keyHash: r.key_hash }));
}
