import type { Queryable } from "@chat/platform";

export interface MessageRow {
  id: number;
  realmId: number;
  senderId: number;
  recipientId: number;
  streamId: number | null;
  topic: string;
  content: string;
  renderedContent: string;
  sendingClient: string;
  dateSent: Date;
  lastEditTime: Date | null;
}

export const MESSAGE_COLUMNS = `m.id, m.realm_id, m.sender_id, m.recipient_id, m.stream_id, m.topic, m.content, m.rendered_content,
  m.sending_client, m.date_sent, m.last_edit_time`;

export function toMessage(r: any): MessageRow {
  return {
    id: Number(r.id),
    realmId: Number(r.realm_id),
    senderId: Number(r.sender_id),
    recipientId: Number(r.recipient_id),
    streamId: r.stream_id === null ? null : Number(r.stream_id),
    topic: r.topic,
    content: r.content,
    renderedContent: r.rendered_content,
    sendingClient: r.sending_client,
    dateSent: r.date_sent,
    lastEditTime: r.last_edit_time,
  };
}

export interface NewMessage {
  realmId: number;
  senderId: number;
  recipientId: number;
  streamId: number | null;
  topic: string;
  content: string;
  renderedContent: string;
  sendingClient: string;
  dateSent: Date;
  hasLink: boolean;
  hasImage: boolean;
  hasAttachment: boolean;
}

export async function insertMessage(db: Queryable, m: NewMessage): Promise<number> {
  const { rows } = await db.query(
    `INSERT INTO messages (realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, sending_client,
       date_sent, has_link, has_image, has_attachment, search_tsv)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
       setweight(to_tsvector('english', $5), 'A') || to_tsvector('english', $6))
     RETURNING id`,
    [m.realmId, m.senderId, m.recipientId, m.streamId, m.topic, m.content, m.renderedContent, m.sendingClient, m.dateSent,
      m.hasLink, m.hasImage, m.hasAttachment],
  );
  return Number(rows[0].id);
}

export async function selectMessagesByIds(db: Queryable, realmId: number, ids: number[]): Promise<MessageRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query(`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.realm_id = $1 AND m.id = ANY($2::bigint[]) ORDER BY m.id`, [realmId, ids]);
  return rows.map(toMessage);
}

export async function deleteMessageRow(db: Queryable, realmId: number, id: number): Promise<void> {
  await db.query("DELETE FROM messages WHERE realm_id = $1 AND id = $2", [realmId, id]);
}

/** Whether any message exists in this topic (case-insensitively), before the one being sent. */
export async function topicHasMessages(db: Queryable, realmId: number, streamId: number, topic: string): Promise<boolean> {
  const { rowCount } = await db.query(
    "SELECT 1 FROM messages WHERE realm_id = $1 AND stream_id = $2 AND lower(topic) = lower($3) LIMIT 1",
    [realmId, streamId, topic],
  );
  return (rowCount ?? 0) > 0;
}

/** Senders of a topic's messages: Zulip's topic participants. */
export async function selectTopicParticipants(db: Queryable, realmId: number, streamId: number, topic: string): Promise<number[]> {
  const { rows } = await db.query(
    "SELECT DISTINCT sender_id FROM messages WHERE realm_id = $1 AND stream_id = $2 AND lower(topic) = lower($3)",
    [realmId, streamId, topic],
  );
  return rows.map((r) => Number(r.sender_id));
}

export async function selectMaxMessageId(db: Queryable, realmId: number, userId: number): Promise<number> {
  const { rows } = await db.query("SELECT max(message_id) AS id FROM usermessages WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
  return rows[0].id === null ? -1 : Number(rows[0].id);
}
