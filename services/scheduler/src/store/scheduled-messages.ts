import { linkedPathIds } from "@chat/contracts";
import type { Queryable } from "@chat/platform";

export interface ScheduledMessageRow {
  id: number;
  realmId: number;
  senderId: number;
  recipientType: "stream" | "private";
  streamId: number | null;
  userIds: number[] | null;
  topic: string | null;
  content: string;
  renderedContent: string;
  scheduledAt: Date;
  readBySender: boolean | null;
  sendingClient: string;
  delivered: boolean;
  deliveredMessageId: number | null;
  failed: boolean;
  failureMessage: string | null;
  failureCount: number;
}

const COLUMNS = `id, realm_id, sender_id, recipient_type, stream_id, user_ids, topic, content, rendered_content,
  scheduled_at, read_by_sender, sending_client, delivered, delivered_message_id, failed, failure_message, failure_count`;

function toRow(r: Record<string, any>): ScheduledMessageRow {
  return {
    id: Number(r.id),
    realmId: Number(r.realm_id),
    senderId: Number(r.sender_id),
    recipientType: r.recipient_type,
    streamId: r.stream_id === null ? null : Number(r.stream_id),
    userIds: r.user_ids === null ? null : (r.user_ids as Array<string | number>).map(Number),
    topic: r.topic,
    content: r.content,
    renderedContent: r.rendered_content,
    scheduledAt: new Date(r.scheduled_at),
    readBySender: r.read_by_sender,
    sendingClient: r.sending_client,
    delivered: r.delivered,
    deliveredMessageId: r.delivered_message_id === null ? null : Number(r.delivered_message_id),
    failed: r.failed,
    failureMessage: r.failure_message,
    failureCount: r.failure_count,
  };
}

export interface NewScheduledMessage {
  realmId: number;
  senderId: number;
  recipientType: "stream" | "private";
  streamId: number | null;
  userIds: number[] | null;
  topic: string | null;
  content: string;
  renderedContent: string;
  scheduledAt: Date;
  readBySender: boolean | null;
  sendingClient: string;
  createdAt: Date;
}

export async function insertScheduledMessage(db: Queryable, m: NewScheduledMessage): Promise<ScheduledMessageRow> {
  const { rows } = await db.query(
    `INSERT INTO scheduled_messages (realm_id, sender_id, recipient_type, stream_id, user_ids, topic, content,
       rendered_content, scheduled_at, read_by_sender, sending_client, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${COLUMNS}`,
    [m.realmId, m.senderId, m.recipientType, m.streamId, m.userIds, m.topic, m.content, m.renderedContent,
      m.scheduledAt, m.readBySender, m.sendingClient, m.createdAt],
  );
  return toRow(rows[0]);
}

/** One of a sender's scheduled messages (delivered ones included), locked for an update. */
export async function selectForSenderForUpdate(
  db: Queryable,
  realmId: number,
  senderId: number,
  id: number,
): Promise<ScheduledMessageRow | null> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM scheduled_messages WHERE realm_id = $1 AND sender_id = $2 AND id = $3 FOR UPDATE`,
    [realmId, senderId, id],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** A sender's undelivered scheduled messages (failed ones included), by delivery time. */
export async function selectUndeliveredForSender(db: Queryable, realmId: number, senderId: number): Promise<ScheduledMessageRow[]> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM scheduled_messages
      WHERE realm_id = $1 AND sender_id = $2 AND NOT delivered
      ORDER BY scheduled_at, id`,
    [realmId, senderId],
  );
  return rows.map(toRow);
}

/** The upload path ids that messages not yet delivered (failed ones included) link. */
export async function selectPendingUploadLinks(db: Queryable): Promise<string[]> {
  const { rows } = await db.query("SELECT content FROM scheduled_messages WHERE NOT delivered AND content LIKE '%/user_uploads/%'");
  return [...new Set(rows.flatMap((r) => linkedPathIds(r.content)))];
}

export interface ScheduledMessageChanges {
  recipientType: "stream" | "private";
  streamId: number | null;
  userIds: number[] | null;
  topic: string | null;
  content: string;
  renderedContent: string;
  scheduledAt: Date;
  failed: boolean;
}

export async function updateScheduledMessage(
  db: Queryable,
  realmId: number,
  id: number,
  c: ScheduledMessageChanges,
): Promise<ScheduledMessageRow> {
  const { rows } = await db.query(
    `UPDATE scheduled_messages SET recipient_type = $3, stream_id = $4, user_ids = $5, topic = $6, content = $7,
       rendered_content = $8, scheduled_at = $9, failed = $10, failure_message = CASE WHEN $10 THEN failure_message END
     WHERE realm_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [realmId, id, c.recipientType, c.streamId, c.userIds, c.topic, c.content, c.renderedContent, c.scheduledAt, c.failed],
  );
  return toRow(rows[0]);
}

export async function deleteScheduledMessage(db: Queryable, realmId: number, id: number): Promise<void> {
  await db.query("DELETE FROM scheduled_messages WHERE realm_id = $1 AND id = $2", [realmId, id]);
}

/**
 * Claims the next due message across all organizations: the row stays locked until the
 * caller's transaction ends, and other replicas skip it instead of waiting or sending it too.
 * Only a sender's earliest due message is eligible, so while one claimer sends it the others
 * move on to other senders: each sender's messages go out one after another, in scheduled
 * order (as Zulip's single delivery worker does), while different senders' go in parallel.
 * `skip`: rows not to claim now (waiting to be retried); they still hold back their sender's later ones.
 */
export async function claimNextDue(db: Queryable, now: Date, skip: number[] = []): Promise<ScheduledMessageRow | null> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM scheduled_messages s
      WHERE NOT delivered AND NOT failed AND scheduled_at <= $1 AND NOT (s.id = ANY($2::bigint[]))
        AND NOT EXISTS (
          SELECT 1 FROM scheduled_messages e
           WHERE e.realm_id = s.realm_id AND e.sender_id = s.sender_id
             AND NOT e.delivered AND NOT e.failed AND e.scheduled_at <= $1
             AND (e.scheduled_at, e.id) < (s.scheduled_at, s.id))
      ORDER BY scheduled_at, id
      LIMIT 1
      FOR UPDATE OF s SKIP LOCKED`,
    [now, skip],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

export async function markDelivered(db: Queryable, realmId: number, id: number, messageId: number): Promise<void> {
  await db.query(
    "UPDATE scheduled_messages SET delivered = true, delivered_message_id = $3 WHERE realm_id = $1 AND id = $2",
    [realmId, id, messageId],
  );
}

export async function markFailed(db: Queryable, realmId: number, id: number, reason: string): Promise<ScheduledMessageRow> {
  const { rows } = await db.query(
    `UPDATE scheduled_messages SET failed = true, failure_message = $3, failure_count = failure_count + 1
      WHERE realm_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [realmId, id, reason],
  );
  return toRow(rows[0]);
}
