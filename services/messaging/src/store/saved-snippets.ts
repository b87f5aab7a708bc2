import type { Queryable } from "@chat/platform";

export interface SavedSnippetRow {
  id: number;
  title: string;
  content: string;
  dateCreated: Date;
}

const toRow = (r: any): SavedSnippetRow => ({ id: Number(r.id), title: r.title, content: r.content, dateCreated: r.date_created });

export async function insertSavedSnippet(db: Queryable, realmId: number, userId: number, title: string, content: string, now: Date): Promise<SavedSnippetRow> {
  const { rows } = await db.query(
    "INSERT INTO saved_snippets (realm_id, user_id, title, content, date_created) VALUES ($1, $2, $3, $4, $5) RETURNING *",
    [realmId, userId, title, content, now],
  );
  return toRow(rows[0]);
}

export async function deleteSavedSnippet(db: Queryable, realmId: number, userId: number, id: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM saved_snippets WHERE realm_id = $1 AND user_id = $2 AND id = $3", [realmId, userId, id]);
  return (rowCount ?? 0) > 0;
}

/** A user's saved snippets, oldest first. */
export async function selectSavedSnippets(db: Queryable, realmId: number, userId: number): Promise<SavedSnippetRow[]> {
  const { rows } = await db.query("SELECT * FROM saved_snippets WHERE realm_id = $1 AND user_id = $2 ORDER BY id", [realmId, userId]);
  return rows.map(toRow);
}
