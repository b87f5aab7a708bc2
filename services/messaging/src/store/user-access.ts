import type { Queryable } from "@chat/platform";

/**
 * For each of `userIds`, the users who share an active channel subscription or a direct message
 * conversation with them (themselves included when they have any). Whom a guest accesses where
 * the organization limits guests (the relation goes both ways).
 */
export async function selectConversationPartners(db: Queryable, realmId: number, userIds: number[]): Promise<Map<number, Set<number>>> {
  const out = new Map<number, Set<number>>(userIds.map((id) => [id, new Set<number>()]));
  if (userIds.length === 0) return out;
  // The conversations are found by the recipients_direct_participants index: its expression
  // (the participants as an array) is spelled here exactly as it was created.
  const { rows } = await db.query(
    `SELECT mine.user_id AS viewer, theirs.user_id AS other
       FROM subscriptions mine JOIN subscriptions theirs ON theirs.stream_id = mine.stream_id AND theirs.active
      WHERE mine.realm_id = $1 AND mine.user_id = ANY($2::bigint[]) AND mine.active
     UNION
     SELECT v.id, p.other
       FROM recipients r
       JOIN unnest($2::bigint[]) AS v(id) ON v.id = ANY (string_to_array(r.user_ids_key, ',')::bigint[])
       CROSS JOIN LATERAL unnest(string_to_array(r.user_ids_key, ',')::bigint[]) AS p(other)
      WHERE r.realm_id = $1 AND r.user_ids_key IS NOT NULL AND string_to_array(r.user_ids_key, ',')::bigint[] && $2::bigint[]`,
    [realmId, userIds],
  );
  for (const r of rows) out.get(Number(r.viewer))?.add(Number(r.other));
  return out;
}

/** The active guests (role 600) among these users, by the replica. */
export async function selectGuestIds(db: Queryable, realmId: number, userIds: number[]): Promise<number[]> {
  if (userIds.length === 0) return [];
  const { rows } = await db.query("SELECT user_id FROM users WHERE realm_id = $1 AND user_id = ANY($2::bigint[]) AND role = 600 AND is_active ORDER BY user_id", [
    realmId,
    userIds,
  ]);
  return rows.map((r) => Number(r.user_id));
}
