import type { Queryable } from "@chat/platform";

/** A custom emoji as accounts keeps it (a replica of messaging's). */
export interface RealmEmojiRow {
  id: number;
  name: string;
  deactivated: boolean;
}

const toRow = (r: any): RealmEmojiRow => ({ id: Number(r.id), name: r.name, deactivated: r.deactivated });

export async function listRealmEmoji(db: Queryable, realmId: number): Promise<RealmEmojiRow[]> {
  const { rows } = await db.query("SELECT id, name, deactivated FROM realm_emoji WHERE realm_id = $1 ORDER BY id", [realmId]);
  return rows.map(toRow);
}

/** Adds the emoji not seen yet; a deactivated one stays deactivated whatever a later row says. */
export async function mergeRealmEmoji(db: Queryable, realmId: number, emoji: RealmEmojiRow[]): Promise<void> {
  if (emoji.length === 0) return;
  await db.query(
    `INSERT INTO realm_emoji (realm_id, id, name, deactivated)
     SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::boolean[])
     ON CONFLICT (realm_id, id) DO UPDATE SET deactivated = realm_emoji.deactivated OR EXCLUDED.deactivated`,
    [realmId, emoji.map((e) => e.id), emoji.map((e) => e.name), emoji.map((e) => e.deactivated)],
  );
}
