import type { Queryable } from "@chat/platform";

export interface DraftRow {
  id: number;
  userId: number;
  type: "" | "stream" | "private";
  to: number[];
  topic: string;
  content: string;
  lastEditTime: Date;
}

function toDraft(r: any): DraftRow {
  return {
    id: Number(r.id),
    userId: Number(r.user_id),
    type: r.type,
    to: (r.to_ids as Array<string | number>).map(Number),
    topic: r.topic,
    content: r.content,
    lastEditTime: r.last_edit_time,
  };
}

export interface DraftValues {
  type: DraftRow["type"];
  to: number[];
  topic: string;
  content: string;
  lastEditTime: Date;
}

export async function insertDraft(db: Queryable, realmId: number, userId: number, d: DraftValues): Promise<DraftRow> {
  const { rows } = await db.query(
    `INSERT INTO drafts (realm_id, user_id, type, to_ids, topic, content, last_edit_time)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [realmId, userId, d.type, d.to, d.topic, d.content, d.lastEditTime],
  );
  return toDraft(rows[0]);
}

export async function draftExists(db: Queryable, realmId: number, userId: number, id: number): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM drafts WHERE realm_id = $1 AND user_id = $2 AND id = $3", [realmId, userId, id]);
  return (rowCount ?? 0) > 0;
}

export async function updateDraft(db: Queryable, realmId: number, userId: number, id: number, d: DraftValues): Promise<DraftRow | null> {
  const { rows } = await db.query(
    `UPDATE drafts SET type = $4, to_ids = $5, topic = $6, content = $7, last_edit_time = $8
      WHERE realm_id = $1 AND user_id = $2 AND id = $3 RETURNING *`,
    [realmId, userId, id, d.type, d.to, d.topic, d.content, d.lastEditTime],
  );
  return rows[0] ? toDraft(rows[0]) : null;
}

export async function deleteDraft(db: Queryable, realmId: number, userId: number, id: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM drafts WHERE realm_id = $1 AND user_id = $2 AND id = $3", [realmId, userId, id]);
  return (rowCount ?? 0) > 0;
}

export async function deleteUserDrafts(db: Queryable, realmId: number, userId: number): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM drafts WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
  return rowCount ?? 0;
}

/** A user's drafts, by last edit: ascending (GET /drafts) or newest first (register). */
export async function selectDrafts(db: Queryable, realmId: number, userId: number, order: "asc" | "desc", limit = 100000): Promise<DraftRow[]> {
  const { rows } = await db.query(
    `SELECT * FROM drafts WHERE realm_id = $1 AND user_id = $2 ORDER BY last_edit_time ${order === "asc" ? "ASC" : "DESC"}, id ${order === "asc" ? "ASC" : "DESC"} LIMIT $3`,
    [realmId, userId, limit],
  );
  return rows.map(toDraft);
}
