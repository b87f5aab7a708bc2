import { fetched, sortedUnique, upsert, type Applier, type AppliedEvent, type ApplyContext, type State } from "./types";
import { editUnread, flattenUnread, rebuildUnread, type UnreadItem } from "./unread";

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);

function sortSubscriptionLists(state: State): void {
  for (const key of ["subscriptions", "unsubscribed", "never_subscribed"]) if (Array.isArray(state[key])) state[key].sort(byName);
}

/** Muting changes which unread messages count; rebuild (false when the state cannot tell). */
function recountUnread(state: State): boolean {
  return !state.unread_msgs || rebuildUnread(state, flattenUnread(state));
}

function subscription(state: State, event: AppliedEvent, ctx: ApplyContext): boolean {
  if (!fetched(ctx, "subscription")) return false;
  if (!Array.isArray(state.subscriptions)) return true;
  const ids = new Set<number>();
  switch (event.op) {
    case "add":
      for (const sub of event.subscriptions) {
        upsert(state.subscriptions, "stream_id", sub);
        ids.add(sub.stream_id);
      }
      state.unsubscribed = state.unsubscribed.filter((s: any) => !ids.has(s.stream_id));
      state.never_subscribed = state.never_subscribed.filter((s: any) => !ids.has(s.stream_id));
      break;
    case "remove": {
      for (const sub of event.subscriptions) ids.add(sub.stream_id);
      const removed = state.subscriptions.filter((s: any) => ids.has(s.stream_id));
      for (const sub of removed) if (Array.isArray(sub.subscribers)) sub.subscribers = sub.subscribers.filter((id: number) => id !== ctx.userId);
      state.subscriptions = state.subscriptions.filter((s: any) => !ids.has(s.stream_id));
      for (const sub of removed) upsert(state.unsubscribed, "stream_id", sub);
      // The unread messages of a channel one left leave unread_msgs (messaging's register does the same).
      if (state.unread_msgs) {
        sortSubscriptionLists(state);
        return rebuildUnread(state, flattenUnread(state).filter((i) => i.kind !== "stream" || !ids.has(i.streamId)));
      }
      break;
    }
    case "update": {
      const sub = state.subscriptions.find((s: any) => s.stream_id === event.stream_id);
      if (!sub) return true;
      sub[event.property] = event.value;
      // The two names of one setting move together (in_home_view is the inverse of is_muted).
      if (event.property === "in_home_view" && "is_muted" in sub) sub.is_muted = !event.value;
      if (event.property === "is_muted" && "in_home_view" in sub) sub.in_home_view = !event.value;
      if (event.property === "is_muted" || event.property === "in_home_view") return recountUnread(state);
      break;
    }
    case "peer_add":
    case "peer_remove": {
      const streams = new Set<number>(event.stream_ids);
      for (const key of ["subscriptions", "unsubscribed", "never_subscribed"]) {
        for (const s of state[key] ?? []) {
          if (!streams.has(s.stream_id) || !Array.isArray(s.subscribers)) continue;
          s.subscribers = event.op === "peer_add"
            ? sortedUnique([...s.subscribers, ...event.user_ids])
            : s.subscribers.filter((id: number) => !event.user_ids.includes(id));
        }
      }
      break;
    }
    default:
      return false;
  }
  sortSubscriptionLists(state);
  return true;
}

/**
 * One channel object after a stream update: the property, the description's rendering with it,
 * and the two settings a privacy change carries along (Zulip's apply_event).
 */
function updateChannel(s: Record<string, unknown>, event: AppliedEvent): void {
  if (event.property in s) s[event.property] = event.value;
  if (event.property === "description" && "rendered_description" in event) s.rendered_description = event.rendered_description;
  for (const key of ["history_public_to_subscribers", "is_web_public"]) {
    if (event[key] !== undefined && event[key] !== null && key in s) s[key] = event[key];
  }
}

function stream(state: State, event: AppliedEvent, ctx: ApplyContext): boolean {
  if (!fetched(ctx, "stream") && !fetched(ctx, "subscription")) return false;
  switch (event.op) {
    case "create":
      for (const s of event.streams) {
        if (Array.isArray(state.streams)) upsert(state.streams, "stream_id", s);
        const known = [...(state.subscriptions ?? []), ...(state.unsubscribed ?? [])].some((x: any) => x.stream_id === s.stream_id);
        if (Array.isArray(state.never_subscribed) && !known) {
          upsert(state.never_subscribed, "stream_id", ctx.includeSubscribers ? { ...s, subscribers: [] } : { ...s });
        }
      }
      break;
    case "delete": {
      // A deleted channel leaves every list; no subscription remove comes with it.
      const ids = new Set<number>(event.streams.map((s: any) => s.stream_id));
      // Messaging marks a deleted channel's messages read for everyone, without a flags event.
      const inDeleted = (i: UnreadItem) => i.kind === "stream" && ids.has(i.streamId);
      if (state.unread_msgs && flattenUnread(state).some(inDeleted) && !editUnread(state, (items) => items.filter((i) => !inDeleted(i)))) return false;
      for (const key of ["streams", "subscriptions", "unsubscribed", "never_subscribed"]) {
        if (Array.isArray(state[key])) state[key] = state[key].filter((s: any) => !ids.has(s.stream_id));
      }
      if (Array.isArray(state.realm_default_streams)) {
        state.realm_default_streams = state.realm_default_streams.filter((s: any) => !ids.has(s.stream_id));
      }
      // Announcements to a deleted channel are off (register says -1 then; no realm event comes).
      for (const key of ["realm_new_stream_announcements_stream_id", "realm_signup_announcements_stream_id", "realm_zulip_update_announcements_stream_id"]) {
        if (ids.has(state[key])) state[key] = -1;
      }
      break;
    }
    case "update":
      for (const key of ["streams", "subscriptions", "unsubscribed", "never_subscribed", "realm_default_streams"]) {
        for (const s of state[key] ?? []) if (s.stream_id === event.stream_id) updateChannel(s, event);
      }
      break;
    default:
      return false;
  }
  if (Array.isArray(state.streams)) state.streams.sort((a: any, b: any) => a.stream_id - b.stream_id);
  sortSubscriptionLists(state);
  return true;
}

function userTopic(state: State, event: AppliedEvent, ctx: ApplyContext): boolean {
  if (!fetched(ctx, "user_topic")) return false;
  if (!Array.isArray(state.user_topics)) return true;
  const key = (t: any) => `${t.stream_id}:${String(t.topic_name).toLowerCase()}`;
  const { type: _t, ...topic } = event;
  state.user_topics = state.user_topics.filter((t: any) => key(t) !== key(topic));
  if (topic.visibility_policy !== 0) state.user_topics.push(topic);
  state.user_topics.sort((a: any, b: any) => a.last_updated - b.last_updated || a.stream_id - b.stream_id);
  return recountUnread(state);
}

/** The legacy list replaces the whole of register's muted_topics. */
function mutedTopics(state: State, event: AppliedEvent, ctx: ApplyContext): boolean {
  if (!fetched(ctx, "muted_topics")) return false;
  if (Array.isArray(state.muted_topics)) state.muted_topics = event.muted_topics;
  return true;
}

/** The whole list of default channels replaces register's. */
function defaultStreams(state: State, event: AppliedEvent, ctx: ApplyContext): boolean {
  if (!fetched(ctx, "default_streams")) return false;
  if (Array.isArray(state.realm_default_streams)) state.realm_default_streams = event.default_streams;
  return true;
}

export const channelAppliers: Record<string, Applier> = {
  subscription,
  stream,
  user_topic: userTopic,
  muted_topics: mutedTopics,
  default_streams: defaultStreams,
};
