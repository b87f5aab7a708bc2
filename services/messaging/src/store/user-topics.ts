import type { Queryable } from "@chat/platform";

export interface UserTopicRow {
  userId: number;
  streamId: number;
  topicName: string;
  visibilityPolicy: number;
  lastUpdated: Date;
}

function toRow(r: any): UserTopicRow {
  return {
    userId: Number(r.user_id),
    streamId: Number(r.stream_id),
    topicName: r.topic_name,
    visibilityPolicy: r.visibility_policy,
    lastUpdated: r.last_updated,
  };
}

export async function selectUserTopic(db: Queryable, realmId: number, userId: number, streamId: number, topic: string): Promise<UserTopicRow | null> {
  const { rows } = await db.query(
    "SELECT * FROM user_topics WHERE realm_id = $1 AND user_id = $2 AND stream_id = $3 AND lower(topic_name) = lower($4)",
    [realmId, userId, streamId, topic],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

export async function selectUserTopics(db: Queryable, realmId: number, userId: number): Promise<UserTopicRow[]> {
  const { rows } = await db.query("SELECT * FROM user_topics WHERE realm_id = $1 AND user_id = $2 ORDER BY last_updated, stream_id", [realmId, userId]);
  return rows.map(toRow);
}

/** Zulip's legacy muted_topics list: [channel name, topic, unix time] of each muted topic, oldest first. */
export async function selectMutedTopicTuples(db: Queryable, realmId: number, userId: number): Promise<Array<[string, string, number]>> {
  const { rows } = await db.query(
    `SELECT s.name, ut.topic_name, floor(extract(epoch FROM ut.last_updated))::bigint AS at
       FROM user_topics ut JOIN streams s ON s.id = ut.stream_id
      WHERE ut.realm_id = $1 AND ut.user_id = $2 AND ut.visibility_policy = 1
      ORDER BY ut.last_updated, ut.stream_id`,
    [realmId, userId],
  );
  return rows.map((r) => [r.name, r.topic_name, Number(r.at)]);
}

/**
 * Sets a policy; 0 (inherit) removes the row, as Zulip does. True when it changed anything: of
 * two identical writes at once, the second waits for the first's row and then finds nothing to do.
 */
export async function setUserTopic(db: Queryable, realmId: number, userId: number, streamId: number, topic: string, policy: number, at: Date): Promise<boolean> {
  if (policy === 0) {
    const { rowCount } = await db.query("DELETE FROM user_topics WHERE realm_id = $1 AND user_id = $2 AND stream_id = $3 AND lower(topic_name) = lower($4)", [
      realmId,
      userId,
      streamId,
      topic,
    ]);
    return (rowCount ?? 0) > 0;
  }
  const { rowCount } = await db.query(
    `INSERT INTO user_topics (realm_id, user_id, stream_id, topic_name, visibility_policy, last_updated)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (user_id, stream_id, lower(topic_name)) DO UPDATE SET visibility_policy = EXCLUDED.visibility_policy,
       last_updated = EXCLUDED.last_updated
     WHERE user_topics.visibility_policy <> EXCLUDED.visibility_policy`,
    [realmId, userId, streamId, topic, policy, at],
  );
  return (rowCount ?? 0) > 0;
}

/** Every user's visibility policy for one topic (compared case-insensitively). */
export async function selectTopicPolicies(db: Queryable, realmId: number, streamId: number, topic: string): Promise<Array<{ userId: number; policy: number }>> {
  const { rows } = await db.query(
    "SELECT user_id, visibility_policy FROM user_topics WHERE realm_id = $1 AND stream_id = $2 AND lower(topic_name) = lower($3) ORDER BY user_id",
    [realmId, streamId, topic],
  );
  return rows.map((r) => ({ userId: Number(r.user_id), policy: r.visibility_policy as number }));
}
