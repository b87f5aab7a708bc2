import { MessagingMutedTopicsUpdated, MessagingUserTopicUpdated, VISIBILITY_POLICIES, type UserTopicClientEvent } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { z } from "zod";
import type { AppDeps } from "../deps";
import { accessStreamById, accessStreamByName, canSeeStream, findStream, viewerOf } from "../queries/streams";
import { selectMutedTopicTuples, selectUserTopic, setUserTopic } from "../store/user-topics";
import { normalizeTopic } from "../lib/normalize";

/**
 * Sets a user's visibility policy for a topic and tells their clients (inside the caller's
 * transaction): a user_topic event, and, as Zulip still does for clients that did not ask for
 * user_topic, the legacy muted_topics event with the whole list. Setting the policy the topic
 * already has (or clearing one it does not have) changes nothing and tells nobody, as in Zulip.
 */
export async function setVisibilityPolicy(
  tx: Queryable,
  realmId: number,
  userId: number,
  streamId: number,
  topic: string,
  policy: number,
  at: Date,
): Promise<void> {
  // The write itself tells whether the policy changed (a check before it would let two identical
  // requests at once both see the old policy and both announce the change).
  if (!(await setUserTopic(tx, realmId, userId, streamId, topic, policy, at))) return;
  const event: z.infer<typeof UserTopicClientEvent> = {
    type: "user_topic",
    stream_id: streamId,
    topic_name: topic,
    last_updated: Math.floor(at.getTime() / 1000),
    visibility_policy: policy,
  };
  await emitEvent(tx, {
    type: "messaging.user_topic.updated",
    realmId,
    payload: MessagingUserTopicUpdated.parse({ user_id: userId, client: { event, users: [userId] } }),
  });
  const muted = await selectMutedTopicTuples(tx, realmId, userId);
  await emitEvent(tx, {
    type: "messaging.muted_topics.updated",
    realmId,
    payload: MessagingMutedTopicsUpdated.parse({ user_id: userId, client: { event: { type: "muted_topics", muted_topics: muted }, users: [userId] } }),
  });
}

/**
 * POST /user_topics. A policy one holds can be cleared also for a channel one no longer sees
 * (left a private one), as Zulip allows; otherwise it would stay for good. Only the holder of
 * such a row learns anything from that, and they knew the channel already.
 */
export async function doUpdateUserTopic(deps: AppDeps, who: Identity, streamId: number, topicRaw: string, policy: number): Promise<void> {
  const topic = normalizeTopic(topicRaw);
  const held = policy === 0 ? await selectUserTopic(deps.pool, who.realmId, who.userId, streamId, topic) : null;
  const id = held ? held.streamId : (await accessStreamById(deps.pool, viewerOf(who), streamId)).stream.id;
  await withTx(deps.pool, (tx) => setVisibilityPolicy(tx, who.realmId, who.userId, id, topic, policy, deps.clock.now()));
}

export interface MutedTopicChange {
  streamId?: number;
  streamName?: string;
  topic: string;
  op: "add" | "remove";
}

/**
 * PATCH /users/me/subscriptions/muted_topics, deprecated for POST /user_topics (feature level
 * 170): "add" mutes a topic of a channel one can see; "remove" sets the topic back to no
 * policy, also in a channel one no longer sees if one holds a policy there, as Zulip's
 * unmute_topic does. Muting a muted topic or unmuting one not muted is no error and changes
 * nothing (Zulip since feature level 169).
 */
export async function doUpdateMutedTopic(deps: AppDeps, who: Identity, change: MutedTopicChange): Promise<void> {
  if (change.streamId === undefined && change.streamName === undefined) throw badRequest("Please supply 'stream'.");
  if (change.streamId !== undefined && change.streamName !== undefined) throw badRequest("Please choose one: 'stream' or 'stream_id'.");
  const viewer = viewerOf(who);
  const topic = normalizeTopic(change.topic);
  let streamId: number;
  if (change.op === "add") {
    const { stream } =
      change.streamId !== undefined ? await accessStreamById(deps.pool, viewer, change.streamId) : await accessStreamByName(deps.pool, viewer, change.streamName!);
    streamId = stream.id;
  } else {
    const found = await findStream(deps.pool, viewer, change.streamId ?? change.streamName!);
    const held = found ? await selectUserTopic(deps.pool, who.realmId, who.userId, found.stream.id, topic) : null;
    if (!found || (!held && !canSeeStream(viewer, found.stream, found.sub))) throw badRequest("Topic is not muted");
    streamId = found.stream.id;
  }
  const policy = change.op === "add" ? VISIBILITY_POLICIES.muted : VISIBILITY_POLICIES.inherit;
  await withTx(deps.pool, (tx) => setVisibilityPolicy(tx, who.realmId, who.userId, streamId, topic, policy, deps.clock.now()));
}
