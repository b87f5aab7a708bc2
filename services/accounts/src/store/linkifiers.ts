import type { Queryable } from "@chat/platform";

export interface LinkifierRow {
  id: number;
  pattern: string;
  urlTemplate: string;
}

const toRow = (r: any): LinkifierRow => ({ id: r.id, pattern: r.pattern, urlTemplate: r.url_template });

export async function listLinkifiers(db: Queryable, realmId: number): Promise<LinkifierRow[]> {
  const { rows } = await db.query("SELECT * FROM linkifiers WHERE realm_id = $1 ORDER BY position, id", [realmId]);
  return rows.map(toRow);
}

export async function insertLinkifier(db: Queryable, realmId: number, pattern: string, urlTemplate: string): Promise<LinkifierRow> {
  const { rows } = await db.query(
    `INSERT INTO linkifiers (realm_id, pattern, url_template, position)
     VALUES ($1, $2, $3, (SELECT COALESCE(max(position), -1) + 1 FROM linkifiers WHERE realm_id = $1)) RETURNING *`,
    [realmId, pattern, urlTemplate],
  );
  return toRow(rows[0]);
}

export async function updateLinkifier(db: Queryable, realmId: number, id: number, pattern: string, urlTemplate: string): Promise<boolean> {
  const { rowCount } = await db.query("UPDATE linkifiers SET pattern = $3, url_template = $4 WHERE realm_id = $1 AND id = $2", [realmId, id, pattern, urlTemplate]);
  return (rowCount ?? 0) > 0;
}

export async function deleteLinkifier(db: Queryable, realmId: number, id: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM linkifiers WHERE realm_id = $1 AND id = $2", [realmId, id]);
  return (rowCount ?? 0) > 0;
}

export async function setLinkifierPositions(db: Queryable, realmId: number, orderedIds: number[]): Promise<void> {
  await db.query(
    `UPDATE linkifiers l SET position = o.pos - 1
       FROM unnest($2::bigint[]) WITH ORDINALITY AS o(id, pos)
      WHERE l.realm_id = $1 AND l.id = o.id`,
    [realmId, orderedIds],
  );
}

export async function patternTaken(db: Queryable, realmId: number, pattern: string, exceptId: number | null): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM linkifiers WHERE realm_id = $1 AND pattern = $2 AND id IS DISTINCT FROM $3", [realmId, pattern, exceptId]);
  return (rowCount ?? 0) > 0;
}
