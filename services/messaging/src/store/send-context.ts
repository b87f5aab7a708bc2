import type { Queryable } from "@chat/platform";
import { STREAM_COLUMNS, STREAM_FROM, toStream, type StreamRow } from "./streams";
import { SUBSCRIPTION_COLUMNS, toSub, type SubscriptionRow } from "./subscriptions";
import { toUser, USER_COLUMNS, type UserRow } from "./users";
import type { StoredUserSettings } from "./user-settings";

/**
 * Everything a channel send reads before it writes, in one round trip: the sender, the channel
 * (by id or name) and the sender's subscription to it, the channel's active subscribers, their
 * alert words, those of them who muted the sender, those who get channel email notifications by
 * default, the sender's settings and the topic as it is now. Each part is what the separate
 * reads (selectUsersByIds, selectStreamByName, selectSubscription, selectStreamSubscriptions,
 * selectAlertWords, selectMutingUsers, selectUserSettings) return; a part the replica lacks is
 * absent, and the caller falls back to the read-through queries for it.
 */
export interface StreamSendContext {
  sender: UserRow | undefined;
  stream: StreamRow | null;
  senderSub: SubscriptionRow | null;
  /** Active subscribers who are active users; `emailNotifications` null: the user's default. */
  subscribers: Array<{ userId: number; isMuted: boolean; emailNotifications: boolean | null }>;
  /** Subscribers whose replicated settings turn channel email notifications on by default. */
  streamEmailByDefault: Set<number>;
  /** Non-empty alert word lists of the subscribers and the sender. */
  alertWords: Map<number, string[]>;
  /** Subscribers who muted the sender. */
  mutedBy: Set<number>;
  senderSettings: StoredUserSettings | undefined;
  /** The topic before this send; null when no topic was given to look at. */
  topic: { existed: boolean; policies: Map<number, number> } | null;
}

/**
 * The items of a column list (`col`, `x.col` or `expr AS col`) as [expression, name]. The store
 * modules' lists are plain columns; an expression with a comma in it would need a real parser.
 */
function columnsOf(columns: string, alias: string): Array<[string, string]> {
  return columns.split(",").map((item) => {
    const c = item.trim();
    const as = c.split(/\s+AS\s+/i);
    if (as.length === 2) return [as[0], as[1]];
    return [c.includes(".") ? c : `${alias}.${c}`, c.replace(/^\w+\./, "")];
  });
}

/** `a.col AS p_col` for each column of a list. */
function prefixed(columns: string, alias: string, prefix: string): string {
  return columnsOf(columns, alias).map(([expr, name]) => `${expr} AS ${prefix}${name}`).join(", ");
}

/** The prefixed names again, read from a subquery or CTE `from` (spelled out: see preparedName). */
function prefixedNames(columns: string, from: string, prefix: string): string {
  return columnsOf(columns, from).map(([, name]) => `${from}.${prefix}${name}`).join(", ");
}

function unprefixed(row: Record<string, unknown>, prefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in row) if (key.startsWith(prefix)) out[key.slice(prefix.length)] = row[key];
  return out;
}

// The topic's existence is looked up by channel alone (the channel was found in the realm): with
// a realm condition too, a plan made on small tables may walk the realm's messages instead.
const sql = (streamMatch: string) => `
  WITH st AS (
    SELECT ${prefixed(STREAM_COLUMNS, "s", "st_")} FROM ${STREAM_FROM} WHERE s.realm_id = $1 AND ${streamMatch}
  ), subs AS (
    SELECT x.user_id, x.is_muted, x.email_notifications FROM st
      JOIN subscriptions x ON x.realm_id = $1 AND x.stream_id = st.st_id AND x.active
      JOIN users xu ON xu.user_id = x.user_id AND xu.is_active
  )
  SELECT ${prefixed(USER_COLUMNS, "u", "u_")}, ${prefixedNames(STREAM_COLUMNS, "st", "st_")}, ${prefixed(SUBSCRIPTION_COLUMNS, "sub", "sub_")},
    (SELECT coalesce(json_agg(json_build_array(user_id, is_muted, email_notifications)), '[]') FROM subs) AS subscribers,
    (SELECT coalesce(json_agg(us.user_id), '[]') FROM user_settings us
      WHERE us.realm_id = $1 AND us.settings @> '{"enable_stream_email_notifications": true}'
        AND us.user_id IN (SELECT user_id FROM subs)) AS stream_email_by_default,
    (SELECT coalesce(json_agg(json_build_array(a.user_id, a.words)), '[]') FROM alert_words a
      WHERE a.realm_id = $1 AND cardinality(a.words) > 0 AND (a.user_id = $2 OR a.user_id IN (SELECT user_id FROM subs))) AS alert_words,
    (SELECT coalesce(json_agg(mu.user_id), '[]') FROM muted_users mu
      WHERE mu.realm_id = $1 AND mu.muted_user_ids @> ARRAY[$2::bigint] AND mu.user_id IN (SELECT user_id FROM subs)) AS muted_by,
    (SELECT settings FROM user_settings WHERE realm_id = $1 AND user_id = $2) AS sender_settings,
    (SELECT true FROM messages WHERE stream_id = st.st_id AND lower(topic) = lower($4) LIMIT 1) IS NOT NULL AS topic_existed,
    (SELECT coalesce(json_agg(json_build_array(user_id, visibility_policy)), '[]') FROM user_topics
      WHERE realm_id = $1 AND stream_id = st.st_id AND lower(topic_name) = lower($4)) AS topic_policies
  FROM (SELECT 1) AS one
  LEFT JOIN users u ON u.realm_id = $1 AND u.user_id = $2
  LEFT JOIN st ON true
  LEFT JOIN subscriptions sub ON sub.realm_id = $1 AND sub.user_id = $2 AND sub.stream_id = st.st_id`;

// Two texts rather than one with an OR: each is a prepared statement, and a generic plan for
// "id = $3 OR lower(name) = lower($3)" could use neither index.
const BY_ID = sql("s.id = $3::bigint");
const BY_NAME = sql("lower(s.name) = lower($3::text)");

export async function selectStreamSendContext(
  db: Queryable,
  realmId: number,
  senderId: number,
  stream: number | string,
  topic: string | null,
): Promise<StreamSendContext> {
  const { rows } = await db.query(typeof stream === "number" ? BY_ID : BY_NAME, [realmId, senderId, stream, topic]);
  const r = rows[0];
  const found = r.st_id !== null;
  return {
    sender: r.u_user_id === null ? undefined : toUser(unprefixed(r, "u_")),
    stream: found ? toStream(unprefixed(r, "st_")) : null,
    senderSub: r.sub_user_id === null ? null : toSub(unprefixed(r, "sub_")),
    subscribers: (r.subscribers as Array<[number, boolean, boolean | null]>).map(([userId, isMuted, emailNotifications]) => ({
      userId: Number(userId),
      isMuted,
      emailNotifications,
    })),
    streamEmailByDefault: new Set((r.stream_email_by_default as number[]).map(Number)),
    alertWords: new Map((r.alert_words as Array<[number, string[]]>).map(([u, words]) => [Number(u), words])),
    mutedBy: new Set((r.muted_by as number[]).map(Number)),
    senderSettings: r.sender_settings ?? undefined,
    topic:
      found && topic !== null
        ? { existed: r.topic_existed, policies: new Map((r.topic_policies as Array<[number, number]>).map(([u, p]) => [Number(u), Number(p)])) }
        : null,
  };
}

/**
 * A direct message's reads in one round trip: the named users and the sender (as
 * selectUsersByIds returns them; ids the replica lacks are absent), their non-empty alert word
 * lists, those of them who muted the sender, and the conversation's recipient id when it exists
 * (null before its first message).
 */
export interface DirectSendContext {
  users: Map<number, UserRow>;
  alertWords: Map<number, string[]>;
  mutedBy: Set<number>;
  recipientId: number | null;
}

const DIRECT = `
  WITH named AS (
    SELECT ${USER_COLUMNS} FROM users WHERE realm_id = $1 AND user_id = ANY($2::bigint[])
  )
  SELECT (SELECT coalesce(json_agg(json_build_array(${columnsOf(USER_COLUMNS, "named").map(([expr]) => expr).join(", ")})), '[]') FROM named) AS users,
    (SELECT coalesce(json_agg(json_build_array(a.user_id, a.words)), '[]') FROM alert_words a
      WHERE a.realm_id = $1 AND cardinality(a.words) > 0 AND a.user_id IN (SELECT user_id FROM named)) AS alert_words,
    (SELECT coalesce(json_agg(mu.user_id), '[]') FROM muted_users mu
      WHERE mu.realm_id = $1 AND mu.muted_user_ids @> ARRAY[$4::bigint] AND mu.user_id IN (SELECT user_id FROM named)) AS muted_by,
    (SELECT id FROM recipients WHERE realm_id = $1 AND user_ids_key = $3) AS recipient_id`;

export async function selectDirectSendContext(db: Queryable, realmId: number, senderId: number, userIds: number[]): Promise<DirectSendContext> {
  const ids = [...new Set(userIds)].sort((a, b) => a - b);
  const { rows } = await db.query(DIRECT, [realmId, ids, ids.join(","), senderId]);
  const r = rows[0];
  const names = columnsOf(USER_COLUMNS, "named").map(([, name]) => name);
  const users = new Map<number, UserRow>();
  for (const values of r.users as unknown[][]) {
    const u = toUser(Object.fromEntries(names.map((n, i) => [n, values[i]])));
    users.set(u.id, u);
  }
  return {
    users,
    alertWords: new Map((r.alert_words as Array<[number, string[]]>).map(([u, words]) => [Number(u), words])),
    mutedBy: new Set((r.muted_by as number[]).map(Number)),
    recipientId: r.recipient_id === null ? null : Number(r.recipient_id),
  };
}
