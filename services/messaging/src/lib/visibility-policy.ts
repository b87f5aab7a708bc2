/**
 * Zulip's automatic topic visibility on send (feature level 214+): the sender's
 * `automatically_follow_topics_policy` and `automatically_unmute_topics_in_muted_streams_policy`.
 * Pure: the caller supplies the current policy and whether the message starts the topic.
 */

export const VISIBILITY = { inherit: 0, muted: 1, unmuted: 2, followed: 3 } as const;

/** Values of both automatic policies. */
export const AUTO_POLICY = { onParticipation: 1, onSend: 2, onInitiation: 3, never: 4 } as const;

export interface SendContext {
  followPolicy: number;
  unmutePolicy: number;
  /** The sender's current policy for the topic (VISIBILITY.inherit when none). */
  current: number;
  /** The sender muted the channel. */
  streamMuted: boolean;
  /** No earlier message in the topic. */
  startsTopic: boolean;
}

/**
 * The sender's new policy after sending, or undefined when it stays. The policies only ever
 * raise visibility (a followed topic stays followed), and following wins over unmuting.
 */
export function policyAfterSend(c: SendContext): number | undefined {
  if (c.current === VISIBILITY.followed) return undefined;
  // Sending is both participating and sending.
  const onEverySend = (policy: number) => policy === AUTO_POLICY.onParticipation || policy === AUTO_POLICY.onSend;
  if (onEverySend(c.followPolicy)) return VISIBILITY.followed;
  let policy: number | undefined = c.streamMuted && onEverySend(c.unmutePolicy) ? VISIBILITY.unmuted : undefined;
  // A topic with a policy of its own was not started by this message.
  if (c.current !== VISIBILITY.inherit) return policy === c.current ? undefined : policy;
  if (c.startsTopic && c.followPolicy === AUTO_POLICY.onInitiation) return VISIBILITY.followed;
  if (c.startsTopic && c.streamMuted && c.unmutePolicy === AUTO_POLICY.onInitiation) policy = VISIBILITY.unmuted;
  return policy;
}

/**
 * Whether a user mentioned in the message starts following the topic: only with
 * `automatically_follow_topics_where_mentioned`, and never over an explicit mute.
 */
export function followsWhenMentioned(enabled: boolean, current: number): boolean {
  return enabled && current !== VISIBILITY.muted && current !== VISIBILITY.followed;
}

/**
 * Zulip's is_row_muted: whether a channel message is muted for the user (its unread message does
 * not count, and wildcard mentions in it are not mentions): a muted topic, or a muted channel
 * unless the topic is unmuted or followed.
 */
export function isMutedForUser(streamMuted: boolean, policy: number): boolean {
  if (policy === VISIBILITY.muted) return true;
  return streamMuted && policy !== VISIBILITY.unmuted && policy !== VISIBILITY.followed;
}

/**
 * The user's new policy after participating in a topic otherwise than by sending (a reaction):
 * Zulip's visibility_policy_for_participation, applied only where it raises visibility
 * (should_change_visibility_policy: never over a followed topic). Undefined when it stays.
 */
export function policyAfterParticipation(c: Omit<SendContext, "startsTopic">): number | undefined {
  let policy: number | undefined;
  if (c.followPolicy === AUTO_POLICY.onParticipation) policy = VISIBILITY.followed;
  else if (c.streamMuted && c.unmutePolicy === AUTO_POLICY.onParticipation) policy = VISIBILITY.unmuted;
  if (policy === undefined || policy === c.current || c.current === VISIBILITY.followed) return undefined;
  return policy;
}

/**
 * A user's policy for a topic that messages were merged into, from their policies for the moved
 * topic and for the target (Zulip's get_visibility_policy_after_merge): the same policy stays;
 * otherwise the more visible one wins (followed, then unmuted), and a mute survives only when
 * both topics were muted.
 */
export function policyAfterMerge(moved: number, target: number): number {
  if (moved === target) return moved;
  if (moved === VISIBILITY.followed || target === VISIBILITY.followed) return VISIBILITY.followed;
  if (moved === VISIBILITY.unmuted || target === VISIBILITY.unmuted) return VISIBILITY.unmuted;
  return VISIBILITY.inherit;
}
