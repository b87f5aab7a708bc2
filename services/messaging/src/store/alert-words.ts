import type { Queryable } from "@chat/platform";

/** Replaces a user's replicated alert words unless a newer version is already stored. */
export async function upsertAlertWords(db: Queryable, realmId: number, userId: number, words: string[], version: number): Promise<void> {
  await db.query(
    `INSERT INTO alert_words (user_id, realm_id, words, version) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id) DO UPDATE SET words = EXCLUDED.words, version = EXCLUDED.version
     WHERE alert_words.version < EXCLUDED.version`,
    [userId, realmId, words, version],
  );
}

/** The non-empty alert word lists of some users of a realm. */
export async function selectAlertWords(db: Queryable, realmId: number, userIds: number[]): Promise<Map<number, string[]>> {
  if (!userIds.length) return new Map();
  const { rows } = await db.query(
    "SELECT user_id, words FROM alert_words WHERE realm_id = $1 AND user_id = ANY($2::bigint[]) AND cardinality(words) > 0",
    [realmId, userIds],
  );
  return new Map(rows.map((r) => [Number(r.user_id), r.words as string[]]));
}
