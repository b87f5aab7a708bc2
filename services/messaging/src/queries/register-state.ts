import { aggregateUnread, MAX_UNREAD_MESSAGES, type UnreadConversation, type UnreadEntry, type UnreadMsgs } from "@chat/contracts";
import type { Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { FLAG_BITS } from "../lib/flags";
import { SEARCH_STOP_WORDS } from "../lib/narrow";
import { isMutedForUser } from "../lib/visibility-policy";
import { selectMaxMessageId } from "../store/messages";
import { selectDirectParticipants } from "../store/recipients";
import { selectStreamsByIds } from "../store/streams";
import { selectUserTopics } from "../store/user-topics";
import { selectRecentDirectConversations, selectStarredIds, selectUnread } from "../store/usermessages";
import { getRegisterDrafts } from "./drafts";
import { getRealmEmojiDict } from "./realm-emoji";
import { getSavedSnippets } from "./saved-snippets";
import { viewerOf } from "./streams";
import { getDefaultStreams } from "./default-streams";
import { gatherSubscriptions, readChannelView, visibleStreams, type ChannelView, type SubscriptionState } from "./subscriptions";

export interface RegisterStateRequest {
  fetchEventTypes: string[] | null;
  includeSubscribers: boolean;
  /** The client capability: whether it takes null (inherit) channel notification settings. */
  notificationSettingsNull: boolean;
}

/** The register keys messaging owns, for the requested event types (null = all). */
export async function getRegisterState(deps: AppDeps, who: Identity, req: RegisterStateRequest): Promise<Record<string, unknown>> {
  const want = (t: string) => req.fetchEventTypes === null || req.fetchEventTypes.includes(t);
  const viewer = viewerOf(who);
  const state: Record<string, unknown> = {};
  const wantUnread = want("message") && want("update_message_flags");
  // Reads several parts use are made once: the channels with the viewer's subscriptions and
  // traffic, and the viewer's topic policies.
  const view = want("subscription") || want("stream") || wantUnread ? readChannelView(deps, viewer) : null;
  const topicRows = want("user_topic") || want("muted_topics") || wantUnread ? selectUserTopics(deps.pool, who.realmId, who.userId) : null;
  // Their users await them after reads of their own: a failure before then must not count as an
  // unhandled rejection (which ends the process); it still fails the register through them.
  view?.catch(() => {});
  topicRows?.catch(() => {});
  const topics = want("user_topic") || want("muted_topics") ? userTopics(deps, who, topicRows!, view) : null;
  // Independent reads, in parallel (each on its own pooled connection); keys keep this order.
  const [maxId, subscriptions, streams, unread, starred, drafts, userTopicRows, recent, realmEmoji, defaultStreams, savedSnippets] = await Promise.all([
    want("message") ? selectMaxMessageId(deps.pool, who.realmId, who.userId) : null,
    want("subscription") ? gatherSubscriptions(deps, viewer, req.includeSubscribers, view!) : null,
    want("stream") ? visibleStreams(deps, viewer, view!) : null,
    wantUnread ? unreadMessages(deps, who, view!, topicRows!) : null,
    want("starred_messages") ? selectStarredIds(deps.pool, who.realmId, who.userId) : null,
    want("drafts") ? getRegisterDrafts(deps, who) : null,
    topics,
    want("recent_private_conversations") ? recentConversations(deps, who) : null,
    want("realm_emoji") ? getRealmEmojiDict(deps.pool, who.realmId) : null,
    want("default_streams") ? getDefaultStreams(deps, viewer) : null,
    want("saved_snippets") ? getSavedSnippets(deps, who) : null,
  ]);
  if (want("message")) state.max_message_id = maxId;
  if (want("subscription")) Object.assign(state, req.notificationSettingsNull ? subscriptions : await withNotificationDefaults(deps, who, subscriptions!));
  if (want("stream")) state.streams = streams;
  if (wantUnread) state.unread_msgs = unread;
  if (want("starred_messages")) state.starred_messages = starred;
  if (want("drafts")) state.drafts = drafts;
  if (want("saved_snippets")) state.saved_snippets = savedSnippets;
  if (want("user_topic")) state.user_topics = userTopicRows!.map(({ streamName: _n, ...t }) => t);
  // The legacy list, unless the client asked by name for user_topic, which replaces it (Zulip).
  if (want("muted_topics") && !req.fetchEventTypes?.includes("user_topic")) {
    state.muted_topics = userTopicRows!.filter((t) => t.visibility_policy === 1).map((t) => [t.streamName, t.topic_name, t.last_updated]);
  }
  if (want("recent_private_conversations")) state.recent_private_conversations = recent;
  if (want("realm_emoji")) state.realm_emoji = realmEmoji;
  if (want("default_streams")) state.realm_default_streams = defaultStreams;
  // Default channel groups are not kept here; Zulip's register lists none for an organization without them.
  if (want("default_stream_groups")) state.realm_default_stream_groups = [];
  if (want("stop_words")) state.stop_words = SEARCH_STOP_WORDS;
  return state;
}

/** The channel notification settings a null stands for: the user's default for channels (Zulip's names). */
const NOTIFICATION_DEFAULTS = {
  desktop_notifications: "enable_stream_desktop_notifications",
  audible_notifications: "enable_stream_audible_notifications",
  push_notifications: "enable_stream_push_notifications",
  email_notifications: "enable_stream_email_notifications",
} as const;

/**
 * Clients without the `notification_settings_null` capability cannot read null (inherit) in a
 * subscription's notification settings: they get the user's default instead, in `subscriptions`
 * and `unsubscribed`, as Zulip's handle_stream_notifications_compatibility gives them
 * (`wildcard_mentions_notify` stays null there too). The defaults are accounts' settings.
 */
async function withNotificationDefaults(deps: AppDeps, who: Identity, state: SubscriptionState): Promise<SubscriptionState> {
  const subs = [...state.subscriptions, ...state.unsubscribed];
  const keys = Object.keys(NOTIFICATION_DEFAULTS) as Array<keyof typeof NOTIFICATION_DEFAULTS>;
  if (!subs.some((sub) => keys.some((k) => sub[k] === null))) return state;
  const [own] = await deps.accounts.getUserSettings(who.realmId, [who.userId]);
  for (const sub of subs) {
    for (const k of keys) if (sub[k] === null) sub[k] = own?.settings[NOTIFICATION_DEFAULTS[k]] === true;
  }
  return state;
}

async function userTopics(deps: AppDeps, who: Identity, topicRows: ReturnType<typeof selectUserTopics>, view: Promise<ChannelView> | null) {
  const rows = await topicRows;
  const named = view ? (await view).streams : await selectStreamsByIds(deps.pool, who.realmId, [...new Set(rows.map((r) => r.streamId))]);
  const streams = new Map(named.map((s) => [s.id, s.name]));
  return rows.map((r) => ({
    stream_id: r.streamId,
    topic_name: r.topicName,
    last_updated: Math.floor(r.lastUpdated.getTime() / 1000),
    visibility_policy: r.visibilityPolicy,
    streamName: streams.get(r.streamId) ?? "",
  }));
}

async function recentConversations(deps: AppDeps, who: Identity) {
  const rows = await selectRecentDirectConversations(deps.pool, who.realmId, who.userId, 1000);
  return rows.map((r) => ({
    max_message_id: r.maxId,
    user_ids: r.key.split(",").map(Number).filter((id) => id !== who.userId),
  }));
}

/**
 * Zulip's unread_msgs (get_raw_unread_data, aggregate_unread_data): the newest 50,000 unread
 * messages outside channels the user left, grouped by conversation; muted channel messages are
 * listed but not counted, and wildcard mentions in them are not mentions.
 */
async function unreadMessages(deps: AppDeps, who: Identity, view: Promise<ChannelView>, topicRows: ReturnType<typeof selectUserTopics>): Promise<UnreadMsgs> {
  const rows = await selectUnread(deps.pool, who.realmId, who.userId, MAX_UNREAD_MESSAGES);
  const { subs } = await view;
  const topics = await topicRows;
  const policy = new Map(topics.map((t) => [`${t.streamId}:${t.topicName.toLowerCase()}`, t.visibilityPolicy]));
  const participants = await selectDirectParticipants(deps.pool, who.realmId, [...new Set(rows.filter((r) => r.streamId === null).map((r) => r.recipientId))]);
  const entries: UnreadEntry[] = rows.map((r) => {
    const direct = (r.flags & FLAG_BITS.mentioned) !== 0;
    const wildcard = (r.flags & (FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned)) !== 0;
    if (r.streamId === null) {
      const people = participants.get(r.recipientId) ?? [];
      const conversation: UnreadConversation = people.length <= 2
        ? { kind: "pm", other: people.find((id) => id !== who.userId) ?? who.userId }
        : { kind: "huddle", key: people.join(",") };
      return { ...conversation, id: r.messageId, counted: true, listed: direct || wildcard };
    }
    const topicPolicy = policy.get(`${r.streamId}:${r.topic.toLowerCase()}`) ?? 0;
    const muted = isMutedForUser(Boolean(subs.get(r.streamId)?.isMuted), topicPolicy);
    return { kind: "stream", streamId: r.streamId, topic: r.topic, id: r.messageId, counted: !muted, listed: direct || (wildcard && !muted) };
  });
  return aggregateUnread(entries, rows.length >= MAX_UNREAD_MESSAGES);
}
