import type { Queryable } from "@chat/platform";

export async function selectDefaultStreamIds(db: Queryable, realmId: number): Promise<Set<number>> {
  const { rows } = await db.query("SELECT stream_id FROM default_streams WHERE realm_id = $1", [realmId]);
  return new Set(rows.map((r) => Number(r.stream_id)));
}

/** Whether the channel was not a default one before. */
export async function insertDefaultStream(db: Queryable, realmId: number, streamId: number): Promise<boolean> {
  const { rowCount } = await db.query("INSERT INTO default_streams (realm_id, stream_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", [realmId, streamId]);
  return (rowCount ?? 0) > 0;
}

/** Whether the channel was a default one. */
export async function deleteDefaultStream(db: Queryable, realmId: number, streamId: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM default_streams WHERE realm_id = $1 AND stream_id = $2", [realmId, streamId]);
  return (rowCount ?? 0) > 0;
}
