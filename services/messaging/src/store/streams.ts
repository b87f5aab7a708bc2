import type { Queryable } from "@chat/platform";

export interface StreamRow {
  id: number;
  realmId: number;
  name: string;
  description: string;
  renderedDescription: string;
  inviteOnly: boolean;
  isWebPublic: boolean;
  historyPublicToSubscribers: boolean;
  streamPostPolicy: number;
  messageRetentionDays: number | null;
  dateCreated: Date;
  creatorId: number | null;
  canRemoveSubscribersGroup: number;
  firstMessageId: number | null;
  recipientId: number;
  /** Deleted (DELETE /streams/{id}): renamed, without subscribers, visible to nobody. */
  deactivated: boolean;
}

export const STREAM_COLUMNS = `s.id, s.realm_id, s.name, s.description, s.rendered_description, s.invite_only, s.is_web_public,
  s.history_public_to_subscribers, s.stream_post_policy, s.message_retention_days, s.date_created, s.creator_id,
  s.can_remove_subscribers_group, s.first_message_id, s.deactivated, r.id AS recipient_id`;
export const STREAM_FROM = "streams s JOIN recipients r ON r.stream_id = s.id";

export function toStream(r: any): StreamRow {
  return {
    id: Number(r.id),
    realmId: Number(r.realm_id),
    name: r.name,
    description: r.description,
    renderedDescription: r.rendered_description,
    inviteOnly: r.invite_only,
    isWebPublic: r.is_web_public,
    historyPublicToSubscribers: r.history_public_to_subscribers,
    streamPostPolicy: r.stream_post_policy,
    messageRetentionDays: r.message_retention_days,
    dateCreated: r.date_created,
    creatorId: r.creator_id === null ? null : Number(r.creator_id),
    canRemoveSubscribersGroup: Number(r.can_remove_subscribers_group),
    firstMessageId: r.first_message_id === null ? null : Number(r.first_message_id),
    recipientId: Number(r.recipient_id),
    deactivated: r.deactivated === true,
  };
}

export async function selectStreamById(db: Queryable, realmId: number, id: number): Promise<StreamRow | null> {
  const { rows } = await db.query(`SELECT ${STREAM_COLUMNS} FROM ${STREAM_FROM} WHERE s.realm_id = $1 AND s.id = $2`, [realmId, id]);
  return rows[0] ? toStream(rows[0]) : null;
}

export async function selectStreamsByIds(db: Queryable, realmId: number, ids: number[]): Promise<StreamRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query(`SELECT ${STREAM_COLUMNS} FROM ${STREAM_FROM} WHERE s.realm_id = $1 AND s.id = ANY($2::bigint[])`, [realmId, ids]);
  return rows.map(toStream);
}

export async function selectStreamByName(db: Queryable, realmId: number, name: string): Promise<StreamRow | null> {
  const { rows } = await db.query(`SELECT ${STREAM_COLUMNS} FROM ${STREAM_FROM} WHERE s.realm_id = $1 AND lower(s.name) = lower($2)`, [realmId, name]);
  return rows[0] ? toStream(rows[0]) : null;
}

export async function selectStreamsByNames(db: Queryable, realmId: number, lowerNames: string[]): Promise<StreamRow[]> {
  if (lowerNames.length === 0) return [];
  const { rows } = await db.query(`SELECT ${STREAM_COLUMNS} FROM ${STREAM_FROM} WHERE s.realm_id = $1 AND lower(s.name) = ANY($2::text[])`, [realmId, lowerNames]);
  return rows.map(toStream);
}

/** The organization's channels, deleted ones left out. */
export async function selectRealmStreams(db: Queryable, realmId: number): Promise<StreamRow[]> {
  const { rows } = await db.query(`SELECT ${STREAM_COLUMNS} FROM ${STREAM_FROM} WHERE s.realm_id = $1 AND NOT s.deactivated ORDER BY s.id`, [realmId]);
  return rows.map(toStream);
}

/** A channel by id, locked for update. */
export async function selectStreamForUpdate(db: Queryable, realmId: number, id: number): Promise<StreamRow | null> {
  const { rows } = await db.query(`SELECT ${STREAM_COLUMNS} FROM ${STREAM_FROM} WHERE s.realm_id = $1 AND s.id = $2 FOR UPDATE OF s`, [realmId, id]);
  return rows[0] ? toStream(rows[0]) : null;
}

/** The columns PATCH /streams/{id} may change. */
export interface StreamChanges {
  name?: string;
  description?: string;
  renderedDescription?: string;
  inviteOnly?: boolean;
  isWebPublic?: boolean;
  historyPublicToSubscribers?: boolean;
  streamPostPolicy?: number;
  messageRetentionDays?: number | null;
  canRemoveSubscribersGroup?: number;
}

const CHANGE_COLUMNS: Record<keyof StreamChanges, string> = {
  name: "name",
  description: "description",
  renderedDescription: "rendered_description",
  inviteOnly: "invite_only",
  isWebPublic: "is_web_public",
  historyPublicToSubscribers: "history_public_to_subscribers",
  streamPostPolicy: "stream_post_policy",
  messageRetentionDays: "message_retention_days",
  canRemoveSubscribersGroup: "can_remove_subscribers_group",
};

/** Writes the given columns of a channel; false when the new name is taken (unique index). */
export async function updateStream(db: Queryable, realmId: number, id: number, changes: StreamChanges): Promise<boolean> {
  const keys = (Object.keys(changes) as Array<keyof StreamChanges>).filter((k) => changes[k] !== undefined);
  if (keys.length === 0) return true;
  const sets = keys.map((k, i) => `${CHANGE_COLUMNS[k]} = $${i + 3}`).join(", ");
  try {
    await db.query(`UPDATE streams SET ${sets} WHERE realm_id = $1 AND id = $2`, [realmId, id, ...keys.map((k) => changes[k])]);
  } catch (err) {
    if ((err as { code?: string }).code === "23505") return false;
    throw err;
  }
  return true;
}

/** Marks a channel deleted under its new name and ends its subscriptions, in one statement. */
export async function deactivateStream(db: Queryable, realmId: number, id: number, newName: string): Promise<void> {
  await db.query(
    `WITH s AS (UPDATE streams SET deactivated = true, name = $3 WHERE realm_id = $1 AND id = $2 AND NOT deactivated RETURNING id)
     UPDATE subscriptions SET active = false WHERE realm_id = $1 AND stream_id IN (SELECT id FROM s) AND active`,
    [realmId, id, newName],
  );
}

export interface NewStream {
  realmId: number;
  name: string;
  description: string;
  renderedDescription: string;
  inviteOnly: boolean;
  isWebPublic: boolean;
  historyPublicToSubscribers: boolean;
  streamPostPolicy: number;
  messageRetentionDays: number | null;
  dateCreated: Date;
  creatorId: number;
  canRemoveSubscribersGroup: number;
}

/** Inserts a channel and its recipient row; null when the name is taken (concurrent create). */
export async function insertStream(db: Queryable, s: NewStream): Promise<StreamRow | null> {
  const { rows } = await db.query(
    `INSERT INTO streams (realm_id, name, description, rendered_description, invite_only, is_web_public,
       history_public_to_subscribers, stream_post_policy, message_retention_days, date_created, creator_id,
       can_remove_subscribers_group)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT DO NOTHING RETURNING id`,
    [s.realmId, s.name, s.description, s.renderedDescription, s.inviteOnly, s.isWebPublic, s.historyPublicToSubscribers,
      s.streamPostPolicy, s.messageRetentionDays, s.dateCreated, s.creatorId, s.canRemoveSubscribersGroup],
  );
  if (!rows[0]) return null;
  const id = Number(rows[0].id);
  await db.query("INSERT INTO recipients (realm_id, stream_id) VALUES ($1, $2)", [s.realmId, id]);
  return selectStreamById(db, s.realmId, id);
}

/** Sets first_message_id to the channel's oldest message; says whether that changed it. */
export async function recomputeFirstMessageId(db: Queryable, realmId: number, streamId: number): Promise<{ changed: boolean; firstMessageId: number | null }> {
  const { rows } = await db.query(
    `UPDATE streams s SET first_message_id = (SELECT min(id) FROM messages WHERE realm_id = $1 AND stream_id = $2)
       FROM (SELECT id, first_message_id FROM streams WHERE realm_id = $1 AND id = $2 FOR UPDATE) before
      WHERE s.id = before.id
      RETURNING s.first_message_id, s.first_message_id IS DISTINCT FROM before.first_message_id AS changed`,
    [realmId, streamId],
  );
  const row = rows[0];
  return { changed: Boolean(row?.changed), firstMessageId: row?.first_message_id == null ? null : Number(row.first_message_id) };
}

/**
 * Messages per stream since `since` (the last 4 weeks, for `stream_weekly_traffic`). Message ids
 * grow with the time they were sent, so the first id sent since then is found by a binary search
 * over the primary key (`search`: a few dozen probes, each the first message at or after the
 * middle id), and each stream's count reads its (stream_id, id) index from there on: the cost
 * follows the window's messages, not the channels' whole history (which register paid before).
 * The date is still checked on every counted message.
 */
export async function selectRecentTraffic(db: Queryable, realmId: number, streamIds: number[], since: Date): Promise<Map<number, number>> {
  if (streamIds.length === 0) return new Map();
  const { rows } = await db.query(
    `WITH RECURSIVE search (lo, hi) AS (
       SELECT coalesce((SELECT min(id) FROM messages), 1), coalesce((SELECT max(id) FROM messages), 0) + 1
       UNION ALL
       SELECT CASE WHEN p.id IS NULL OR p.id >= s.hi OR p.date_sent >= $3 THEN s.lo ELSE p.id + 1 END,
              CASE WHEN p.id IS NULL OR p.id >= s.hi THEN (s.lo + s.hi) / 2 WHEN p.date_sent >= $3 THEN p.id ELSE s.hi END
         FROM search s LEFT JOIN LATERAL (SELECT id, date_sent FROM messages WHERE id >= (s.lo + s.hi) / 2 ORDER BY id LIMIT 1) p ON true
        WHERE s.lo < s.hi
     ), boundary AS (
       SELECT hi AS id FROM search WHERE lo >= hi
     )
     SELECT x.id AS stream_id,
       (SELECT count(*) FROM messages m WHERE m.stream_id = x.id AND m.id >= boundary.id AND m.realm_id = $1 AND m.date_sent >= $3)::int AS n
       FROM unnest($2::bigint[]) AS x (id), boundary`,
    [realmId, streamIds, since],
  );
  return new Map(rows.map((r) => [Number(r.stream_id), r.n as number]));
}

/**
 * A channel's topics with their newest message (whose spelling names the topic). Walks the
 * (stream_id, lower(topic), id) index from topic to topic, two index probes per topic, instead
 * of reading every message of the channel: a channel's topic list costs what its topics do.
 */
export async function selectStreamTopics(db: Queryable, realmId: number, streamId: number, maxId?: number): Promise<Array<{ name: string; maxId: number }>> {
  const { rows } = await db.query(
    `WITH RECURSIVE keys AS (
       (SELECT lower(topic) AS k FROM messages WHERE stream_id = $2 ORDER BY lower(topic) DESC LIMIT 1)
       UNION ALL
       SELECT (SELECT lower(m.topic) FROM messages m WHERE m.stream_id = $2 AND lower(m.topic) < keys.k ORDER BY lower(m.topic) DESC LIMIT 1)
         FROM keys WHERE keys.k IS NOT NULL
     )
     SELECT newest.topic, newest.id AS max_id
       FROM keys CROSS JOIN LATERAL (
         SELECT m.topic, m.id FROM messages m
          WHERE m.stream_id = $2 AND lower(m.topic) = keys.k AND m.realm_id = $1 AND ($3::bigint IS NULL OR m.id <= $3)
          ORDER BY m.id DESC LIMIT 1
       ) newest`,
    [realmId, streamId, maxId ?? null],
  );
  return rows.map((r) => ({ name: r.topic, maxId: Number(r.max_id) })).sort((a, b) => b.maxId - a.maxId);
}

/** The topics of a channel's messages one user received (has a row for), newest first. */
export async function selectReceivedTopics(db: Queryable, realmId: number, userId: number, streamId: number): Promise<Array<{ name: string; maxId: number }>> {
  const { rows } = await db.query(
    `SELECT DISTINCT ON (lower(m.topic)) m.topic, max(m.id) OVER (PARTITION BY lower(m.topic)) AS max_id
       FROM usermessages um JOIN messages m ON m.id = um.message_id
      WHERE um.realm_id = $1 AND um.user_id = $2 AND m.realm_id = $1 AND m.stream_id = $3
      ORDER BY lower(m.topic), m.id DESC`,
    [realmId, userId, streamId],
  );
  return rows.map((r) => ({ name: r.topic, maxId: Number(r.max_id) })).sort((a, b) => b.maxId - a.maxId);
}

/**
 * Marks every unread message of a channel read for everyone (a deleted channel's unread would
 * otherwise count for ever). Kept here rather than with usermessages: only deletion uses it.
 *
 * The channel's message ids are read first, and their rows found through usermessages' index by
 * message. Unread is tested as `flags % 2 = 0` (flags are never negative) rather than in the form
 * of the unread partial index's predicate, so that PostgreSQL cannot use that index: led by the
 * user, it can only be read whole for a message id, and a plan made on small tables did that
 * once per message of the channel (1,496 pages for six messages and 63,000 unread rows).
 */
export async function markStreamMessagesReadForEveryone(db: Queryable, realmId: number, streamId: number): Promise<void> {
  await db.query(
    `UPDATE usermessages um SET flags = um.flags | 1
      WHERE um.message_id = ANY(ARRAY(SELECT id FROM messages WHERE realm_id = $1 AND stream_id = $2))
        AND um.realm_id = $1 AND (um.flags % 2) = 0`,
    [realmId, streamId],
  );
}

/** Active channels whose can_remove_subscribers_group is one of these groups (the only group setting of a channel here). */
export async function selectStreamsUsingGroups(db: Queryable, realmId: number, groupIds: number[]): Promise<Array<{ id: number; canRemoveSubscribersGroup: number }>> {
  const { rows } = await db.query(
    `SELECT id, can_remove_subscribers_group FROM streams
      WHERE realm_id = $1 AND NOT deactivated AND can_remove_subscribers_group = ANY($2::bigint[]) ORDER BY id`,
    [realmId, groupIds],
  );
  return rows.map((r) => ({ id: Number(r.id), canRemoveSubscribersGroup: Number(r.can_remove_subscribers_group) }));
}
