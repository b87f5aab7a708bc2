import type { Queryable } from "@chat/platform";

/** A user's alert words in the order they were added. */
export async function listAlertWords(db: Queryable, realmId: number, userId: number): Promise<string[]> {
  const { rows } = await db.query("SELECT word FROM alert_words WHERE realm_id = $1 AND user_id = $2 ORDER BY id", [realmId, userId]);
  return rows.map((r) => r.word);
}

/** Adds words whose lower-case form the user does not have yet; the first spelling wins. */
export async function insertAlertWords(db: Queryable, realmId: number, userId: number, words: string[]): Promise<void> {
  if (!words.length) return;
  await db.query(
    `INSERT INTO alert_words (realm_id, user_id, word)
     SELECT $1, $2, w FROM unnest($3::text[]) WITH ORDINALITY AS t(w, n) ORDER BY n
     ON CONFLICT (user_id, lower(word)) DO NOTHING`,
    [realmId, userId, words],
  );
}

export async function deleteAlertWords(db: Queryable, realmId: number, userId: number, words: string[]): Promise<void> {
  if (!words.length) return;
  await db.query(
    "DELETE FROM alert_words WHERE realm_id = $1 AND user_id = $2 AND lower(word) = ANY($3::text[])",
    [realmId, userId, words.map((w) => w.toLowerCase())],
  );
}

/** Serializes changes of one user's list (the version order must match the commit order). */
export async function lockAlertWordsOwner(db: Queryable, realmId: number, userId: number): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM users WHERE realm_id = $1 AND id = $2 FOR NO KEY UPDATE", [realmId, userId]);
  return (rowCount ?? 0) > 0;
}

export async function nextAlertWordsVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query("SELECT nextval('alert_words_version') AS v");
  return Number(rows[0].v);
}
