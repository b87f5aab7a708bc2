import type { Queryable } from "@chat/platform";

/** The recipient of a direct conversation among `userIds` (created on first use). */
export async function upsertDirectRecipient(db: Queryable, realmId: number, userIds: number[]): Promise<number> {
  const key = [...new Set(userIds)].sort((a, b) => a - b).join(",");
  const { rows } = await db.query(
    `INSERT INTO recipients (realm_id, user_ids_key) VALUES ($1, $2)
     ON CONFLICT (realm_id, user_ids_key) WHERE user_ids_key IS NOT NULL DO UPDATE SET user_ids_key = EXCLUDED.user_ids_key
     RETURNING id`,
    [realmId, key],
  );
  return Number(rows[0].id);
}

export async function selectDirectRecipient(db: Queryable, realmId: number, userIds: number[]): Promise<number | null> {
  const key = [...new Set(userIds)].sort((a, b) => a - b).join(",");
  const { rows } = await db.query("SELECT id FROM recipients WHERE realm_id = $1 AND user_ids_key = $2", [realmId, key]);
  return rows[0] ? Number(rows[0].id) : null;
}

/** Participants of direct-conversation recipients, by recipient id. */
export async function selectDirectParticipants(db: Queryable, realmId: number, recipientIds: number[]): Promise<Map<number, number[]>> {
  if (recipientIds.length === 0) return new Map();
  const { rows } = await db.query(
    "SELECT id, user_ids_key FROM recipients WHERE realm_id = $1 AND id = ANY($2::bigint[]) AND user_ids_key IS NOT NULL",
    [realmId, recipientIds],
  );
  return new Map(rows.map((r) => [Number(r.id), String(r.user_ids_key).split(",").map(Number)]));
}
