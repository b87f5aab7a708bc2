import type { DomainEnvelope, EditHistoryEntry } from "@chat/contracts";
import { outboxRowsWritten, type Queryable } from "@chat/platform";

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
  /** Zulip's edit_history: newest edit first; null before the first edit. */
  editHistory: EditHistoryEntry[] | null;
}

export const MESSAGE_COLUMNS = `m.id, m.realm_id, m.sender_id, m.recipient_id, m.stream_id, m.topic, m.content, m.rendered_content,
  m.sending_client, m.date_sent, m.last_edit_time, m.edit_history`;

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
    editHistory: r.edit_history ?? null,
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

export interface StoredSend {
  id: number;
  /** Whether the topic (case-insensitively) had messages before this one; false for direct messages. */
  topicExisted: boolean;
  /** Visibility policies of the topic before this send, by user (channel messages only). */
  topicPolicies: Map<number, number>;
  /** This is the channel's first message: it set the channel's first_message_id. */
  firstInChannel: boolean;
}

/** A recipient the message may be mailed to while away (see missed_message_emails), and why. */
export interface EmailNotice {
  userId: number;
  /** Zulip's notification triggers, most important first. */
  triggers: string[];
}

/**
 * The CTEs that write a message: the message (`m`), its recipients' usermessage rows, the
 * channel's first message id and the missed-message email rows (due after each user's batching
 * period, from the settings replica; Zulip's 120 s when unknown), with $1-$16 as
 * messageWriteValues lists them.
 */
const MESSAGE_WRITES = `m AS (
       INSERT INTO messages (realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, sending_client,
         date_sent, has_link, has_image, has_attachment, search_tsv)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
         setweight(to_tsvector('english', $5), 'A') || to_tsvector('english', $6))
       RETURNING id
     ), um AS (
       INSERT INTO usermessages (realm_id, user_id, message_id, flags)
       SELECT $1, x.u, m.id, x.f FROM m, unnest($13::bigint[], $14::int[]) AS x(u, f)
     ), first AS (
       UPDATE streams s SET first_message_id = m.id FROM m
        WHERE s.realm_id = $1 AND s.id = $4 AND s.first_message_id IS NULL
       RETURNING s.id
     ), mme AS (
       INSERT INTO missed_message_emails (realm_id, user_id, message_id, triggers, due_at)
       SELECT $1, x.u, m.id, x.t, $9::timestamptz + make_interval(secs => coalesce(
           (SELECT (us.settings->>'email_notifications_batching_period_seconds')::int FROM user_settings us WHERE us.user_id = x.u), 120))
         FROM m, unnest($15::bigint[], $16::text[]) AS x(u, t)
     )`;

function messageWriteValues(m: NewMessage, entries: Array<{ userId: number; flags: number }>, notices: EmailNotice[]): unknown[] {
  return [m.realmId, m.senderId, m.recipientId, m.streamId, m.topic, m.content, m.renderedContent, m.sendingClient, m.dateSent,
    m.hasLink, m.hasImage, m.hasAttachment, entries.map((e) => e.userId), entries.map((e) => e.flags),
    notices.map((n) => n.userId), notices.map((n) => n.triggers.join(","))];
}

/**
 * A send's writes in one statement (one round trip instead of five): the message, its
 * recipients' usermessage rows and the channel's first message id, with what the send's rules
 * need to know about the topic as it was before (all parts of a statement share one snapshot).
 * The topic's existence is looked up by the channel alone, which the caller found in the realm
 * (see send-context.ts).
 */
export async function insertSentMessage(
  db: Queryable,
  m: NewMessage,
  entries: Array<{ userId: number; flags: number }>,
  notices: EmailNotice[] = [],
): Promise<StoredSend> {
  const { rows } = await db.query(
    `WITH prior AS (
       SELECT EXISTS (SELECT 1 FROM messages WHERE stream_id = $4 AND lower(topic) = lower($5)) AS existed,
         (SELECT coalesce(json_agg(json_build_array(user_id, visibility_policy)), '[]'::json) FROM user_topics
           WHERE realm_id = $1 AND stream_id = $4 AND lower(topic_name) = lower($5)) AS policies
     ), ${MESSAGE_WRITES}
     SELECT m.id, prior.existed, prior.policies, EXISTS (SELECT 1 FROM first) AS first_in_channel FROM m, prior`,
    messageWriteValues(m, entries, notices),
  );
  const r = rows[0];
  return {
    id: Number(r.id),
    topicExisted: r.existed as boolean,
    topicPolicies: new Map((r.policies as Array<[number, number]>).map(([u, p]) => [Number(u), Number(p)])),
    firstInChannel: r.first_in_channel as boolean,
  };
}

/**
 * A send that needs nothing else written (no topic policy, no uploads to claim, no idempotency
 * key, an existing conversation) in one statement, without a transaction around it: the message,
 * its usermessage rows, the channel's first message id, its missed-message email rows and the
 * outbox row of its event, whose payload gets the new id at each of `idPaths` here. A single
 * statement commits or fails whole.
 */
export async function insertMessageWithEvent(
  db: Queryable,
  m: NewMessage,
  entries: Array<{ userId: number; flags: number }>,
  event: DomainEnvelope,
  idPaths: string[][],
  notices: EmailNotice[] = [],
): Promise<number> {
  let payload = "$18::jsonb";
  for (const path of idPaths) payload = `jsonb_set(${payload}, '{${path.join(",")}}', to_jsonb(m.id))`;
  const { rows } = await db.query(
    `WITH ${MESSAGE_WRITES}, o AS (
       INSERT INTO outbox (id, type, version, realm_id, payload, occurred_at)
       SELECT $17, $19, $20, $1, ${payload}, $21 FROM m
     )
     SELECT m.id FROM m`,
    [...messageWriteValues(m, entries, notices), event.id, JSON.stringify(event.payload), event.type, event.version, event.occurred_at],
  );
  outboxRowsWritten(db);
  return Number(rows[0].id);
}

export async function selectMessagesByIds(db: Queryable, realmId: number, ids: number[]): Promise<MessageRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query(`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.realm_id = $1 AND m.id = ANY($2::bigint[]) ORDER BY m.id`, [realmId, ids]);
  return rows.map(toMessage);
}

/** Which of these messages still exist, each locked against deletion until the transaction ends. */
export async function lockMessagesAgainstDeletion(db: Queryable, realmId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query("SELECT id FROM messages WHERE realm_id = $1 AND id = ANY($2::bigint[]) ORDER BY id FOR KEY SHARE", [realmId, ids]);
  return new Set(rows.map((r) => Number(r.id)));
}

/** Deletes a message; its usermessage rows go with it (a trigger, see the migrations). False when it was already gone. */
export async function deleteMessageRow(db: Queryable, realmId: number, id: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM messages WHERE realm_id = $1 AND id = $2", [realmId, id]);
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

/**
 * The newest message the user has (register's max_message_id): the last entry of the user's part
 * of the primary key. As `max(message_id) ... WHERE realm_id AND user_id`, the realm's condition
 * needed every row's heap tuple, and a plan made while the table was small read all of the
 * user's rows (a bitmap scan and an aggregate) on every register. The realm is checked on the
 * one row found (user ids are the deployment's, so it always matches).
 */
export async function selectMaxMessageId(db: Queryable, realmId: number, userId: number): Promise<number> {
  const { rows } = await db.query(
    `SELECT um.message_id AS id
       FROM (SELECT message_id, realm_id FROM usermessages WHERE user_id = $2 ORDER BY message_id DESC LIMIT 1) um
      WHERE um.realm_id = $1`,
    [realmId, userId],
  );
  return rows.length === 0 ? -1 : Number(rows[0].id);
}

/** Locks one message against concurrent edits and deletion until the transaction ends; false when it is gone. */
export async function lockMessageForEdit(db: Queryable, realmId: number, id: number): Promise<boolean> {
  const { rows } = await db.query("SELECT id FROM messages WHERE realm_id = $1 AND id = $2 FOR UPDATE", [realmId, id]);
  return rows.length > 0;
}

/**
 * A channel topic's messages (the topic compared case-insensitively, as Zulip does), oldest
 * first, only those after `afterId` when given, locked against concurrent edits and deletion.
 */
export async function lockTopicMessages(
  db: Queryable,
  realmId: number,
  streamId: number,
  topic: string,
  afterId?: number,
): Promise<Array<{ id: number; dateSent: Date }>> {
  const { rows } = await db.query(
    `SELECT id, date_sent FROM messages WHERE realm_id = $1 AND stream_id = $2 AND lower(topic) = lower($3) AND id > $4
      ORDER BY id FOR UPDATE`,
    [realmId, streamId, topic, afterId ?? 0],
  );
  return rows.map((r) => ({ id: Number(r.id), dateSent: r.date_sent }));
}

/** Ids of a channel topic's messages (case-insensitively), oldest first, but for `excludeIds`. */
export async function selectTopicMessageIds(db: Queryable, realmId: number, streamId: number, topic: string, excludeIds: number[] = []): Promise<number[]> {
  const { rows } = await db.query(
    `SELECT id FROM messages WHERE realm_id = $1 AND stream_id = $2 AND lower(topic) = lower($3) AND NOT (id = ANY($4::bigint[]))
      ORDER BY id`,
    [realmId, streamId, topic, excludeIds],
  );
  return rows.map((r) => Number(r.id));
}

export interface EditedContent {
  content: string;
  renderedContent: string;
  hasLink: boolean;
  hasImage: boolean;
  hasAttachment: boolean;
}

/** A content edit: the new Markdown and rendering (and the search index over them). */
export async function updateMessageContent(db: Queryable, realmId: number, id: number, c: EditedContent): Promise<void> {
  await db.query(
    `UPDATE messages SET content = $3, rendered_content = $4, has_link = $5, has_image = $6, has_attachment = $7,
       search_tsv = setweight(to_tsvector('english', topic), 'A') || to_tsvector('english', $3)
     WHERE realm_id = $1 AND id = $2`,
    [realmId, id, c.content, c.renderedContent, c.hasLink, c.hasImage, c.hasAttachment],
  );
}

/** Moves messages to another topic and/or channel (its recipient); the search index follows the topic. */
export async function moveMessageRows(
  db: Queryable,
  realmId: number,
  ids: number[],
  to: { topic: string; streamId: number; recipientId: number },
): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `UPDATE messages SET topic = $3, stream_id = $4, recipient_id = $5,
       search_tsv = setweight(to_tsvector('english', $3), 'A') || to_tsvector('english', content)
     WHERE realm_id = $1 AND id = ANY($2::bigint[])`,
    [realmId, ids, to.topic, to.streamId, to.recipientId],
  );
}

/** Records an edit on messages: their last edit time, and the entry at the head of their edit history. */
export async function recordMessageEdit(db: Queryable, realmId: number, ids: number[], at: Date, entry: EditHistoryEntry): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `UPDATE messages SET last_edit_time = $3, edit_history = jsonb_build_array($4::jsonb) || coalesce(edit_history, '[]'::jsonb)
      WHERE realm_id = $1 AND id = ANY($2::bigint[])`,
    [realmId, ids, at, JSON.stringify(entry)],
  );
}

/** Who sent these messages or reacted to any of them, each once, ascending. */
export async function selectSenderAndReactorIds(db: Queryable, realmId: number, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query(
    `SELECT sender_id AS user_id FROM messages WHERE realm_id = $1 AND id = ANY($2::bigint[])
     UNION SELECT user_id FROM reactions WHERE realm_id = $1 AND message_id = ANY($2::bigint[])
     ORDER BY user_id`,
    [realmId, ids],
  );
  return rows.map((r) => Number(r.user_id));
}
