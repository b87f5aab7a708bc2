import { avatarUrl, SYSTEM_BOT_AVATAR_PATH, type MessageObject, type MessageReaction, type StreamObject, type SubscriptionObject } from "@chat/contracts";
import type { MessageRow } from "../store/messages";
import type { ReactionRow } from "../store/reactions";
import type { StreamRow } from "../store/streams";
import type { SubmessageRow } from "../store/submessages";
import type { SubscriptionRow } from "../store/subscriptions";
import type { UserRow } from "../store/users";
import { flagsToList } from "./flags";
import type { TopicLink } from "./linkifiers";

const unix = (d: Date) => Math.floor(d.getTime() / 1000);

/** Zulip's estimate: messages over the last 4 weeks per week; null for channels under a week old. */
export function weeklyTraffic(stream: StreamRow, recentCount: number, now: Date): number | null {
  const ageDays = Math.floor((now.getTime() - stream.dateCreated.getTime()) / 86_400_000);
  let avg: number;
  if (ageDays >= 28) avg = Math.floor(recentCount / 4);
  else if (ageDays >= 7) avg = Math.floor((recentCount * 7) / ageDays);
  else return null;
  if (avg === 0 && recentCount > 0) avg = 1;
  return avg;
}

export function streamObject(stream: StreamRow, traffic: number | null): StreamObject {
  return {
    stream_id: stream.id,
    name: stream.name,
    description: stream.description,
    rendered_description: stream.renderedDescription,
    date_created: unix(stream.dateCreated),
    creator_id: stream.creatorId,
    invite_only: stream.inviteOnly,
    is_web_public: stream.isWebPublic,
    stream_post_policy: stream.streamPostPolicy,
    message_retention_days: stream.messageRetentionDays,
    history_public_to_subscribers: stream.historyPublicToSubscribers,
    first_message_id: stream.firstMessageId,
    is_announcement_only: stream.streamPostPolicy === 2,
    can_remove_subscribers_group: stream.canRemoveSubscribersGroup,
    stream_weekly_traffic: traffic,
  };
}

export function subscriptionObject(stream: StreamRow, sub: SubscriptionRow, traffic: number | null, subscribers?: number[]): SubscriptionObject {
  const s = streamObject(stream, traffic);
  const out: SubscriptionObject = {
    stream_id: s.stream_id,
    name: s.name,
    description: s.description,
    rendered_description: s.rendered_description,
    date_created: s.date_created,
    creator_id: s.creator_id,
    invite_only: s.invite_only,
    desktop_notifications: sub.desktopNotifications,
    email_notifications: sub.emailNotifications,
    wildcard_mentions_notify: sub.wildcardMentionsNotify,
    push_notifications: sub.pushNotifications,
    audible_notifications: sub.audibleNotifications,
    pin_to_top: sub.pinToTop,
    is_muted: sub.isMuted,
    in_home_view: !sub.isMuted,
    is_announcement_only: s.is_announcement_only,
    is_web_public: s.is_web_public,
    color: sub.color,
    stream_post_policy: s.stream_post_policy,
    message_retention_days: s.message_retention_days,
    history_public_to_subscribers: s.history_public_to_subscribers,
    first_message_id: s.first_message_id,
    stream_weekly_traffic: s.stream_weekly_traffic,
    can_remove_subscribers_group: s.can_remove_subscribers_group,
  };
  if (subscribers) out.subscribers = subscribers;
  return out;
}

/**
 * A message sender's avatar_url (Zulip's MessageDict.set_sender_avatar): the uploaded image or
 * the delivery email's Gravatar, with the avatar version; with client_gravatar null only for a
 * Gravatar of a sender whose email everyone may see (the client hashes the API email, which for
 * the others is a dummy address). A replica row without that knowledge counts as hidden.
 */
export function senderAvatarUrl(sender: UserRow, clientGravatar: boolean): string | null {
  return avatarUrl(sender, { clientGravatar, emailPublic: sender.emailPublic === true });
}

export interface MessageContext {
  sender: UserRow | undefined;
  /** Channel name for channel messages. */
  streamName?: string;
  /** Participants (sender included) for direct messages. */
  participants?: UserRow[];
  realmStr: string;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  /** The viewer's flag bits; undefined for a message event (flags travel per user). */
  flags?: number;
  /** A channel message's topic links (the organization's linkifiers applied to its topic). */
  topicLinks?: TopicLink[];
  /** The message's reactions, oldest first (none when not given: a message just sent). */
  reactions?: MessageReaction[];
  /** The organization's allow_edit_history; edit_history is left out when it is off (default on). */
  allowEditHistory?: boolean;
  /** The message's submessages (its widget and what was added to it), oldest first. */
  submessages?: SubmessageRow[];
  /** The organization's Notification Bot, whose avatar is a fixed image (its messages show it). */
  notificationBotId?: number | null;
}

/** Zulip's message dictionary as clients read it. */
export function messageObject(m: MessageRow, ctx: MessageContext): MessageObject {
  const sender = ctx.sender;
  const email = sender?.email ?? "";
  const out: MessageObject = {
    id: m.id,
    sender_id: m.senderId,
    content: ctx.applyMarkdown ? m.renderedContent : m.content,
    content_type: ctx.applyMarkdown ? "text/html" : "text/x-markdown",
    recipient_id: m.recipientId,
    timestamp: unix(m.dateSent),
    client: m.sendingClient,
    subject: m.streamId === null ? "" : m.topic,
    topic_links: ctx.topicLinks ?? [],
    is_me_message: m.content.startsWith("/me "),
    reactions: ctx.reactions ?? [],
    submessages: ctx.submessages ?? [],
    sender_full_name: sender?.fullName ?? "",
    sender_email: email,
    sender_realm_str: ctx.realmStr,
    display_recipient:
      m.streamId !== null
        ? (ctx.streamName ?? "")
        : (ctx.participants ?? [])
            .slice()
            .sort((a, b) => a.id - b.id)
            .map((u) => ({ id: u.id, email: u.email, full_name: u.fullName, is_mirror_dummy: false })),
    type: m.streamId === null ? "private" : "stream",
    avatar_url: !sender ? null : sender.id === ctx.notificationBotId ? SYSTEM_BOT_AVATAR_PATH : senderAvatarUrl(sender, ctx.clientGravatar),
  };
  if (m.streamId !== null) out.stream_id = m.streamId;
  if (ctx.flags !== undefined) out.flags = flagsToList(ctx.flags);
  if (m.lastEditTime) out.last_edit_timestamp = unix(m.lastEditTime);
  // Never to clients of an organization that hides edit history (Zulip's messages_for_ids).
  if (m.editHistory && ctx.allowEditHistory !== false) out.edit_history = m.editHistory;
  return out;
}

/** A reaction as message objects carry it, with the legacy copy of the user (feature level 267). */
export function reactionObject(r: ReactionRow, user: UserRow | undefined): MessageReaction {
  return {
    emoji_name: r.emojiName,
    emoji_code: r.emojiCode,
    reaction_type: r.reactionType,
    user_id: r.userId,
    user: { id: r.userId, email: user?.email ?? "", full_name: user?.fullName ?? "", is_mirror_dummy: false },
  };
}

/** Zulip's palette for new subscriptions; the first one the user does not use yet is picked. */
export const STREAM_COLORS = [
  "#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5",
  "#f5ce6e", "#c2726a", "#94c849", "#bd86e5", "#ee7e4a", "#a6dcbf", "#95a5fd", "#53a063",
  "#9987e1", "#e4523d", "#c2c2c2", "#4f8de4", "#c6a8ad", "#e7cc4d", "#c8bebf", "#a47462",
];

export function pickColor(used: Set<string>, count: number): string {
  return STREAM_COLORS.find((c) => !used.has(c)) ?? STREAM_COLORS[count % STREAM_COLORS.length];
}
