import { badRequest } from "@chat/platform";
import { FLAG_BITS } from "./flags";
import { normalizeTopic } from "./normalize";
import { passesCommonPolicy, type Actor } from "./permissions";

/** Zulip's prefix of a resolved topic. */
export const RESOLVED_TOPIC_PREFIX = "✔ ";

/**
 * Seconds an edit or move is still accepted past its time limit: clients stop offering it a
 * little before the limit, and a request may take a while (Zulip's edit_limit_buffer).
 */
export const EDIT_LIMIT_BUFFER_SECONDS = 20;

/**
 * The time limit a move of a whole topic is held to, as Zulip's
 * check_time_limit_for_change_all_propagate_mode: the stricter of the organization's limits that
 * apply (a new topic, a new channel); null when none does (no change, or no limit set).
 */
export function moveTimeLimit(
  settings: { move_messages_within_stream_limit_seconds: number | null; move_messages_between_streams_limit_seconds: number | null },
  topicChanged: boolean,
  streamChanged: boolean,
): number | null {
  const limits = [
    topicChanged ? settings.move_messages_within_stream_limit_seconds : null,
    streamChanged ? settings.move_messages_between_streams_limit_seconds : null,
  ].filter((l): l is number => l !== null);
  return limits.length ? Math.min(...limits) : null;
}

/** Zulip's rendered_content_version (its Markdown processor's version), kept in edit history. */
export const RENDERED_CONTENT_VERSION = 1;

export type PropagateMode = "change_one" | "change_later" | "change_all";

/**
 * Zulip's has_permission for edit_topic_policy and move_messages_between_streams_policy: the
 * common policies (1 members, 2 admins, 3 full members, 4 moderators, 6 nobody, 7 owners),
 * where guests never pass, plus 5 "everyone", guests included (edit_topic_policy only).
 */
export function passesMovePolicy(policy: number, actor: Actor, waitingPeriodDays: number, now: Date): boolean {
  if (policy === 5) return true;
  return passesCommonPolicy(policy, actor, waitingPeriodDays, now);
}

/** Whether `limitSeconds` (plus the buffer) have passed since the message was sent. */
export function pastTimeLimit(dateSent: Date, now: Date, limitSeconds: number): boolean {
  return now.getTime() - dateSent.getTime() > (limitSeconds + EDIT_LIMIT_BUFFER_SECONDS) * 1000;
}

/**
 * Zulip's validate_message_edit_payload: the request is well formed for this message (before
 * any permission check). `topic` and `streamId` are undefined when they do not change anything;
 * `isWidget` tells whether the message has submessages (a poll, a todo list).
 * Returns the new topic as stored (truncated like a sent one), if any.
 */
export function checkEditPayload(
  isStreamMessage: boolean,
  req: { content?: string; topic?: string; streamId?: number; propagateMode: string; isWidget?: boolean },
): string | undefined {
  const { content, topic, streamId, propagateMode } = req;
  if (topic === undefined && content === undefined && streamId === undefined) throw badRequest("Nothing to change");
  if (!isStreamMessage) {
    if (streamId !== undefined) throw badRequest("Direct messages cannot be moved to channels.");
    if (topic !== undefined) throw badRequest("Direct messages cannot have topics.");
  }
  if (propagateMode !== "change_one" && topic === undefined && streamId === undefined) {
    throw badRequest("Invalid propagate_mode without topic edit");
  }
  const newTopic = topic === undefined ? undefined : normalizeTopic(topic);
  if (streamId !== undefined && content !== undefined) throw badRequest("Cannot change message content while changing channel");
  // A widget's state lives in its submessages: its content stays as sent.
  if (content !== undefined && req.isWidget) throw badRequest("Widgets cannot be edited.");
  return newTopic;
}

/** A topic rename that toggles the resolved prefix: Zulip's resolve / unresolve. */
export function resolveChange(oldTopic: string, newTopic: string): "resolved" | "unresolved" | null {
  const was = oldTopic.startsWith(RESOLVED_TOPIC_PREFIX);
  const is = newTopic.startsWith(RESOLVED_TOPIC_PREFIX);
  if (is && !was) return "resolved";
  if (was && !is) return "unresolved";
  return null;
}

/**
 * Whether two topic names differ only in the resolved prefix. Zulip compares them with every
 * leading check mark and space stripped, so "✔ ✔ bug" and "bug" count as the same topic.
 */
export function onlyResolvedPrefixChanged(oldTopic: string, newTopic: string): boolean {
  const bare = (topic: string) => topic.replace(/^[✔ ]+/, "");
  return bare(oldTopic) === bare(newTopic);
}

/** `@_**Full Name|id**`: names the user without notifying them. */
export const silentMention = (user: { id: number; fullName: string }) => `@_**${user.fullName}|${user.id}**`;

/** `#**channel>topic**`. */
export const topicLink = (streamName: string, topic: string) => `#**${streamName}>${topic}**`;

/** The notification bot's notice in a resolved or unresolved topic. */
export function resolveNotice(kind: "resolved" | "unresolved", user: string): string {
  return kind === "resolved" ? `${user} has marked this topic as resolved.` : `${user} has marked this topic as unresolved.`;
}

/**
 * The notice left in the topic messages were moved out of (send_notification_to_old_thread): a
 * move that left none of the messages the user can read says the topic moved.
 */
export function oldThreadNotice(count: number, movedAllVisible: boolean, newLocation: string, user: string): string {
  if (movedAllVisible) return `This topic was moved to ${newLocation} by ${user}.`;
  if (count === 1) return `A message was moved from this topic to ${newLocation} by ${user}.`;
  return `${count} messages were moved from this topic to ${newLocation} by ${user}.`;
}

/**
 * The notice in the topic messages were moved to (send_notification_to_new_thread): a whole
 * topic moved into an empty one says so; otherwise how many came, the one linked.
 */
export function newThreadNotice(
  count: number,
  wholeTopic: boolean,
  oldLocation: string,
  user: string,
  messageLink: string,
): string {
  if (wholeTopic) return `This topic was moved here from ${oldLocation} by ${user}.`;
  if (count === 1) return `[A message](${messageLink}) was moved here from ${oldLocation} by ${user}.`;
  return `${count} messages were moved here from ${oldLocation} by ${user}.`;
}

/** Zulip's MessageMoveError text for a change_all move with messages past the time limit. */
export function moveTimeLimitMessage(allowed: number, total: number): string {
  return `You only have permission to move the ${allowed}/${total} most recent messages in this topic.`;
}

/** What a content edit's rendering says about each reader (see flagsAfterContentEdit). */
export interface EditedMentions {
  /** Mentioned personally or through a (non-silent) group mention. */
  mentioned: Set<number>;
  /** Whose alert words the new content contains. */
  alerted: Set<number>;
  streamWildcard: boolean;
  topicWildcard: boolean;
  /** Who a topic wildcard reaches: the topic's participants (everyone in a direct message). */
  topicParticipants: Set<number> | "all";
}

/**
 * A reader's flag bits after a content edit (Zulip's update_user_message_flags): mentioned and
 * has_alert_word follow the new content; a channel wildcard sets its flag (leaving the topic
 * wildcard one as it was), a topic wildcard sets or clears its flag by participation, and
 * content without wildcards clears both. Read, starred and the rest stay.
 */
export function flagsAfterContentEdit(userId: number, flags: number, m: EditedMentions): number {
  const set = (bits: number, bit: number, on: boolean) => (on ? bits | bit : bits & ~bit);
  let out = set(flags, FLAG_BITS.has_alert_word, m.alerted.has(userId));
  out = set(out, FLAG_BITS.mentioned, m.mentioned.has(userId));
  if (m.streamWildcard) out |= FLAG_BITS.stream_wildcard_mentioned;
  else if (m.topicWildcard) out = set(out, FLAG_BITS.topic_wildcard_mentioned, m.topicParticipants === "all" || m.topicParticipants.has(userId));
  else out &= ~(FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned);
  return out;
}
