import type { Queryable } from "@chat/platform";
import type { TopicTraffic } from "../lib/digest-email";

/** Of these users, those whose digest was made at or after `since` (this week's is done). */
export async function selectRecentDigests(db: Queryable, realmId: number, userIds: number[], since: Date): Promise<Set<number>> {
  if (userIds.length === 0) return new Set();
  const { rows } = await db.query("SELECT user_id FROM digest_emails WHERE realm_id = $1 AND user_id = ANY($2::bigint[]) AND last_digest_at >= $3", [
    realmId,
    userIds,
    since,
  ]);
  return new Set(rows.map((r) => Number(r.user_id)));
}

/**
 * Takes the user's digest for this transaction: true unless one was made at or after `since`
 * (by another process too: a concurrent claim waits for the other transaction, then sees its row).
 */
export async function claimDigest(db: Queryable, realmId: number, userId: number, now: Date, since: Date): Promise<boolean> {
  const { rows } = await db.query(
    `INSERT INTO digest_emails (user_id, realm_id, last_digest_at, mailed) VALUES ($1, $2, $3, false)
     ON CONFLICT (user_id) DO UPDATE SET realm_id = EXCLUDED.realm_id, last_digest_at = EXCLUDED.last_digest_at, mailed = false
       WHERE digest_emails.last_digest_at < $4
     RETURNING user_id`,
    [userId, realmId, now, since],
  );
  return rows.length > 0;
}

export async function markDigestMailed(db: Queryable, realmId: number, userId: number): Promise<void> {
  await db.query("UPDATE digest_emails SET mailed = true WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
}

/**
 * The newest message sent at or before `at` (0 if none): read from the newest backwards, so it
 * costs what was sent since. The digest's queries start after it, through the (stream_id, id)
 * index, rather than reading each channel's whole history for the window's dates (ids grow with
 * time; the date is still checked).
 */
export async function selectLastMessageIdAtOrBefore(db: Queryable, at: Date): Promise<number> {
  const { rows } = await db.query("SELECT id FROM messages WHERE date_sent <= $1 ORDER BY id DESC LIMIT 1", [at]);
  return rows[0] ? Number(rows[0].id) : 0;
}

/**
 * The channel messages a user may read, sent in (since, until] and after message $5 (see
 * selectLastMessageIdAtOrBefore): in channels the user is subscribed
 * to and did not mute, outside topics the user muted, by senders not known as bots, and (in
 * channels whose history is not public to subscribers) only the ones the user received.
 */
const READABLE_CHANNEL_MESSAGES = `
  FROM subscriptions sub
  JOIN streams s ON s.id = sub.stream_id AND NOT s.deactivated
  JOIN messages m ON m.stream_id = sub.stream_id
 WHERE sub.realm_id = $1 AND sub.user_id = $2 AND sub.active AND NOT sub.is_muted
   AND m.realm_id = $1 AND m.id > $5 AND m.date_sent > $3 AND m.date_sent <= $4
   AND NOT EXISTS (SELECT 1 FROM users b WHERE b.user_id = m.sender_id AND b.is_bot)
   AND NOT EXISTS (SELECT 1 FROM user_topics ut
                    WHERE ut.user_id = $2 AND ut.stream_id = m.stream_id AND lower(ut.topic_name) = lower(m.topic) AND ut.visibility_policy = 1)
   AND (s.history_public_to_subscribers OR EXISTS (SELECT 1 FROM usermessages um WHERE um.user_id = $2 AND um.message_id = m.id))`;

/** One topic's traffic in the digest's window (the topic as its latest message spells it). */
export type DigestTopicRow = TopicTraffic;

export async function selectDigestTopics(db: Queryable, realmId: number, userId: number, since: Date, until: Date, afterId: number): Promise<DigestTopicRow[]> {
  const { rows } = await db.query(
    `SELECT m.stream_id, s.name AS stream_name, (array_agg(m.topic ORDER BY m.id DESC))[1] AS topic,
            count(*)::int AS messages, count(DISTINCT m.sender_id)::int AS senders, min(m.id) AS first_id
     ${READABLE_CHANNEL_MESSAGES}
      GROUP BY m.stream_id, s.name, lower(m.topic)`,
    [realmId, userId, since, until, afterId],
  );
  return rows.map((r) => ({
    streamId: Number(r.stream_id),
    streamName: r.stream_name,
    topic: r.topic,
    messages: r.messages,
    senders: r.senders,
    firstMessageId: Number(r.first_id),
  }));
}

/** The first `limit` messages of a topic in the window, as the user may read them. */
export async function selectDigestTeasers(
  db: Queryable,
  realmId: number,
  userId: number,
  topic: { streamId: number; topic: string },
  since: Date,
  until: Date,
  afterId: number,
  limit: number,
): Promise<Array<{ id: number; senderId: number; renderedContent: string }>> {
  const { rows } = await db.query(
    `SELECT m.id, m.sender_id, m.rendered_content
     ${READABLE_CHANNEL_MESSAGES}
        AND m.stream_id = $6 AND lower(m.topic) = lower($7)
      ORDER BY m.id LIMIT $8`,
    [realmId, userId, since, until, afterId, topic.streamId, topic.topic, limit],
  );
  return rows.map((r) => ({ id: Number(r.id), senderId: Number(r.sender_id), renderedContent: r.rendered_content }));
}

/**
 * Channels created in (since, until] that the user can see: ones the user is subscribed to, and
 * public ones unless `publicVisible` is false (guests).
 */
export async function selectNewDigestChannels(
  db: Queryable,
  realmId: number,
  userId: number,
  since: Date,
  until: Date,
  publicVisible: boolean,
): Promise<Array<{ id: number; name: string }>> {
  const { rows } = await db.query(
    `SELECT s.id, s.name FROM streams s
      WHERE s.realm_id = $1 AND NOT s.deactivated AND s.date_created > $3 AND s.date_created <= $4
        AND ((NOT s.invite_only AND $5)
             OR EXISTS (SELECT 1 FROM subscriptions sub WHERE sub.stream_id = s.id AND sub.user_id = $2 AND sub.active))
      ORDER BY s.id`,
    [realmId, userId, since, until, publicVisible],
  );
  return rows.map((r) => ({ id: Number(r.id), name: r.name }));
}
