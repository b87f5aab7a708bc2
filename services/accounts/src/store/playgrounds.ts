import type { Queryable } from "@chat/platform";

export interface PlaygroundRow {
  id: number;
  name: string;
  pygmentsLanguage: string;
  urlTemplate: string;
}

const toRow = (r: any): PlaygroundRow => ({ id: Number(r.id), name: r.name, pygmentsLanguage: r.pygments_language, urlTemplate: r.url_template });

export async function listPlaygrounds(db: Queryable, realmId: number): Promise<PlaygroundRow[]> {
  const { rows } = await db.query("SELECT * FROM realm_playgrounds WHERE realm_id = $1 ORDER BY id", [realmId]);
  return rows.map(toRow);
}

export async function insertPlayground(db: Queryable, realmId: number, name: string, pygmentsLanguage: string, urlTemplate: string): Promise<PlaygroundRow> {
  const { rows } = await db.query(
    "INSERT INTO realm_playgrounds (realm_id, name, pygments_language, url_template) VALUES ($1, $2, $3, $4) RETURNING *",
    [realmId, name, pygmentsLanguage, urlTemplate],
  );
  return toRow(rows[0]);
}

export async function playgroundTaken(db: Queryable, realmId: number, pygmentsLanguage: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM realm_playgrounds WHERE realm_id = $1 AND pygments_language = $2 AND name = $3", [realmId, pygmentsLanguage, name]);
  return (rowCount ?? 0) > 0;
}

export async function deletePlayground(db: Queryable, realmId: number, id: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM realm_playgrounds WHERE realm_id = $1 AND id = $2", [realmId, id]);
  return (rowCount ?? 0) > 0;
}
