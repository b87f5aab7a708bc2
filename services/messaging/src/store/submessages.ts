import type { Queryable } from "@chat/platform";

/** A submessage as clients get it in a message's `submessages` (Zulip's SubMessage row). */
export interface SubmessageRow {
  id: number;
  message_id: number;
  sender_id: number;
  msg_type: string;
  content: string;
}

const COLUMNS = "id, message_id, sender_id, msg_type, content";

function toSubmessage(r: any): SubmessageRow {
  return { id: Number(r.id), message_id: Number(r.message_id), sender_id: Number(r.sender_id), msg_type: r.msg_type, content: r.content };
}

export async function insertSubmessage(db: Queryable, realmId: number, s: Omit<SubmessageRow, "id">): Promise<SubmessageRow> {
  const { rows } = await db.query(
    `INSERT INTO submessages (realm_id, message_id, sender_id, msg_type, content) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [realmId, s.message_id, s.sender_id, s.msg_type, s.content],
  );
  return toSubmessage(rows[0]);
}

/** The submessages of these messages, oldest first: one statement for any number. */
export async function selectSubmessages(db: Queryable, realmId: number, messageIds: number[]): Promise<SubmessageRow[]> {
  if (messageIds.length === 0) return [];
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM submessages WHERE realm_id = $1 AND message_id = ANY($2::bigint[]) ORDER BY id`, [
    realmId,
    messageIds,
  ]);
  return rows.map(toSubmessage);
}

/** A message's first submessage (its widget, when it has one). */
export async function firstSubmessage(db: Queryable, realmId: number, messageId: number): Promise<SubmessageRow | null> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM submessages WHERE realm_id = $1 AND message_id = $2 ORDER BY id LIMIT 1`, [realmId, messageId]);
  return rows[0] ? toSubmessage(rows[0]) : null;
}
