import type { Queryable } from "@chat/platform";

/** A user whose earliest missed-message row is due. */
export interface DueUser {
  userId: number;
  realmId: number;
}

/**
 * The user of the earliest due row not locked by another process (nor in `skip`), that row
 * locked until the transaction ends.
 */
export async function claimDueUser(db: Queryable, now: Date, skip: number[]): Promise<DueUser | null> {
  const { rows } = await db.query(
    `SELECT user_id, realm_id FROM missed_message_emails
      WHERE due_at <= $1 AND NOT (user_id = ANY($2::bigint[]))
      ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
    [now, skip],
  );
  return rows[0] ? { userId: Number(rows[0].user_id), realmId: Number(rows[0].realm_id) } : null;
}

/**
 * Whether this transaction now holds the user's batch: false while another process mails it
 * (the two would each see part of the user's rows).
 */
export async function tryLockUserBatch(db: Queryable, userId: number): Promise<boolean> {
  const { rows } = await db.query("SELECT pg_try_advisory_xact_lock(hashtext('messaging.missed_message_emails'), ($1::bigint % 2147483647)::int) AS ok", [
    userId,
  ]);
  return rows[0].ok as boolean;
}

/** One of a user's rows with its message as it is now (`messageId` null: the message is gone). */
export interface PendingEmailRow {
  id: number;
  messageId: number | null;
  triggers: string[];
  senderId: number;
  recipientId: number;
  streamId: number | null;
  streamName: string | null;
  topic: string;
  renderedContent: string;
  dateSent: Date;
  /** The user's flags on it; null when the user no longer has it. */
  flags: number | null;
  /** The user's subscription's own choices (null: none, or inherit). */
  subEmailNotifications: boolean | null;
  subWildcardMentionsNotify: boolean | null;
}

/** Every row of the user's, oldest message first, locked until the transaction ends. */
export async function lockUserEmailRows(db: Queryable, realmId: number, userId: number): Promise<PendingEmailRow[]> {
  const { rows } = await db.query(
    `SELECT e.id, m.id AS message_id, e.triggers, m.sender_id, m.recipient_id, m.stream_id, s.name AS stream_name, m.topic,
            m.rendered_content, m.date_sent, um.flags, sub.email_notifications, sub.wildcard_mentions_notify
       FROM missed_message_emails e
       LEFT JOIN messages m ON m.realm_id = e.realm_id AND m.id = e.message_id
       LEFT JOIN usermessages um ON um.user_id = e.user_id AND um.message_id = e.message_id
       LEFT JOIN streams s ON s.realm_id = e.realm_id AND s.id = m.stream_id
       LEFT JOIN subscriptions sub ON sub.realm_id = e.realm_id AND sub.user_id = e.user_id AND sub.stream_id = m.stream_id
      WHERE e.realm_id = $1 AND e.user_id = $2
      ORDER BY e.message_id, e.id
      FOR UPDATE OF e`,
    [realmId, userId],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    messageId: r.message_id === null ? null : Number(r.message_id),
    triggers: String(r.triggers).split(","),
    senderId: Number(r.sender_id),
    recipientId: Number(r.recipient_id),
    streamId: r.stream_id === null ? null : Number(r.stream_id),
    streamName: r.stream_name,
    topic: r.topic ?? "",
    renderedContent: r.rendered_content ?? "",
    dateSent: r.date_sent,
    flags: r.flags === null ? null : Number(r.flags),
    subEmailNotifications: r.email_notifications ?? null,
    subWildcardMentionsNotify: r.wildcard_mentions_notify ?? null,
  }));
}

export async function deleteEmailRows(db: Queryable, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query("DELETE FROM missed_message_emails WHERE id = ANY($1::bigint[])", [ids]);
}

/**
 * A batch that could not be mailed now waits until `until`, a failed try counted on each of its
 * rows; returns the most tries of any row (0: the rows are gone).
 */
export async function postponeUserEmailRows(db: Queryable, realmId: number, userId: number, until: Date): Promise<number> {
  const { rows } = await db.query(
    `WITH tried AS (
       UPDATE missed_message_emails SET due_at = greatest(due_at, $3), attempts = attempts + 1 WHERE realm_id = $1 AND user_id = $2 RETURNING attempts
     )
     SELECT coalesce(max(attempts), 0)::int AS attempts FROM tried`,
    [realmId, userId, until],
  );
  return rows[0].attempts;
}

/** Deletes the user's rows tried `attempts` times or more; returns how many. */
export async function deleteEmailRowsTried(db: Queryable, realmId: number, userId: number, attempts: number): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM missed_message_emails WHERE realm_id = $1 AND user_id = $2 AND attempts >= $3", [realmId, userId, attempts]);
  return rowCount ?? 0;
}
