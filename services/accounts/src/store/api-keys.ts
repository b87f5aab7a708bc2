import type { Queryable } from "@chat/platform";

export interface ApiKeyCandidate {
  userId: number;
  keyHash: string;
}

export async function insertApiKey(db: Queryable, realmId: number, userId: number, keyHash: string): Promise<void> {
  await db.query("INSERT INTO api_keys (realm_id, user_id, key_hash) VALUES ($1, $2, $3)", [realmId, userId, keyHash]);
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

/** Key hashes of the given users, for the constant-time comparison done by the caller. */
export async function keyHashesOf(db: Queryable, userIds: number[]): Promise<ApiKeyCandidate[]> {
  const { rows } = await db.query("SELECT user_id, key_hash FROM api_keys WHERE user_id = ANY($1::bigint[])", [userIds]);
  return rows.map((r) => ({ userId: r.user_id, keyHash: r.key_hash }));
}
