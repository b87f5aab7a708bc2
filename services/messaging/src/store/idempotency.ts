import type { Queryable } from "@chat/platform";

export async function lockSendKey(db: Queryable, senderId: number, key: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`send:${senderId}:${key}`]);
}

export async function selectSendKey(db: Queryable, realmId: number, senderId: number, key: string): Promise<{ messageId: number; policy: number | null } | null> {
  const { rows } = await db.query(
    "SELECT message_id, automatic_new_visibility_policy FROM send_idempotency WHERE realm_id = $1 AND sender_id = $2 AND idempotency_key = $3",
    [realmId, senderId, key],
  );
  return rows[0] ? { messageId: Number(rows[0].message_id), policy: rows[0].automatic_new_visibility_policy } : null;
}

export async function insertSendKey(db: Queryable, realmId: number, senderId: number, key: string, messageId: number, policy: number | null): Promise<void> {
  await db.query(
    "INSERT INTO send_idempotency (realm_id, sender_id, idempotency_key, message_id, automatic_new_visibility_policy) VALUES ($1, $2, $3, $4, $5)",
    [realmId, senderId, key, messageId, policy],
  );
}
