import { aggregateUnread, MAX_UNREAD_MESSAGES, type UnreadConversation, type UnreadEntry } from "@chat/contracts";
import type { State } from "./types";

/**
 * Register's `unread_msgs`, kept as messaging builds it (contracts' aggregateUnread, Zulip's
 * aggregate_unread_data): it is read into a flat list of unread messages, edited, and rebuilt,
 * so that grouping, order, `count` and `mentions` match a fresh register.
 *
 * Whether a message is in `mentions` depends on muting for wildcard mentions. A message event
 * says which kind of mention it is; register's list and message_details only say whether the
 * message is listed. Such a message is taken as a direct mention when listed and as none when not,
 * which is exact except for a wildcard mention in a conversation whose muting then changes: the
 * state does not hold what would tell.
 */
export type Mention = "direct" | "wildcard" | "none";

export type UnreadItem = UnreadConversation & { id: number; mention: Mention };

type Muted = (streamId: number, topic: string) => boolean;

/** Whether a channel message is muted for the user; null when the state cannot tell. */
export function mutedIn(state: State): Muted | null {
  if (!Array.isArray(state.subscriptions) || !Array.isArray(state.user_topics)) return null;
  const subs = [...state.subscriptions, ...(state.unsubscribed ?? [])];
  const streamMuted = new Map<number, boolean>(subs.map((s: any) => [s.stream_id, Boolean(s.is_muted)]));
  const policy = new Map<string, number>(state.user_topics.map((t: any) => [`${t.stream_id}:${String(t.topic_name).toLowerCase()}`, t.visibility_policy]));
  return (streamId, topic) => {
    const p = policy.get(`${streamId}:${topic.toLowerCase()}`) ?? 0;
    return p === 1 || (Boolean(streamMuted.get(streamId)) && p !== 2 && p !== 3);
  };
}

/** The mention of a message with these flags (a message or update_message event). */
export function mentionOf(flags: string[]): Mention {
  if (flags.includes("mentioned")) return "direct";
  return ["stream_wildcard_mentioned", "topic_wildcard_mentioned", "wildcard_mentioned"].some((f) => flags.includes(f)) ? "wildcard" : "none";
}

const isMuted = (i: UnreadItem, muted: Muted | null) => i.kind === "stream" && muted !== null && muted(i.streamId, i.topic);

/** The unread messages of a state, oldest first. */
export function flattenUnread(state: State): UnreadItem[] {
  const unread = state.unread_msgs;
  const mentions = new Set<number>(unread.mentions ?? []);
  const items: UnreadItem[] = [];
  const add = (c: UnreadConversation, id: number) => items.push({ ...c, id, mention: mentions.has(id) ? "direct" : "none" });
  for (const p of unread.pms ?? []) for (const id of p.unread_message_ids) add({ kind: "pm", other: p.other_user_id }, id);
  for (const h of unread.huddles ?? []) for (const id of h.unread_message_ids) add({ kind: "huddle", key: h.user_ids_string }, id);
  for (const s of unread.streams ?? []) for (const id of s.unread_message_ids) add({ kind: "stream", streamId: s.stream_id, topic: s.topic }, id);
  return items.sort((a, b) => a.id - b.id);
}

/**
 * Rebuilds unread_msgs from the list; false when the state cannot tell the result: muting
 * unknown, or fewer messages than a register that was cut at 50,000 would show (it would bring
 * in older ones this state never saw).
 */
export function rebuildUnread(state: State, items: UnreadItem[]): boolean {
  const muted = mutedIn(state);
  // Channels the user left are not shown (messaging's register leaves them out).
  const left = new Set<number>((state.unsubscribed ?? []).map((s: any) => s.stream_id));
  let kept = [...new Map(items.map((i) => [i.id, i])).values()]
    .filter((i) => i.kind !== "stream" || !left.has(i.streamId))
    .sort((a, b) => a.id - b.id);
  if (!muted && kept.some((i) => i.kind === "stream")) return false;
  let missing = Boolean(state.unread_msgs.old_unreads_missing);
  if (missing && kept.length < MAX_UNREAD_MESSAGES) return false;
  if (kept.length >= MAX_UNREAD_MESSAGES) {
    missing = missing || kept.length > MAX_UNREAD_MESSAGES;
    kept = kept.slice(-MAX_UNREAD_MESSAGES);
  }
  const entries: UnreadEntry[] = [];
  for (const { mention, ...entry } of kept) {
    const m = isMuted(entry as UnreadItem, muted);
    entries.push({ ...entry, counted: !m, listed: mention === "direct" || (mention === "wildcard" && !m) });
  }
  state.unread_msgs = aggregateUnread(entries, missing);
  return true;
}

/** Edits the unread list: false when the state cannot tell the result (see rebuildUnread). */
export function editUnread(state: State, edit: (items: UnreadItem[]) => UnreadItem[] | false): boolean {
  if (!state.unread_msgs) return true;
  const items = edit(flattenUnread(state));
  return items !== false && rebuildUnread(state, items);
}

/** The unread item for a message event's message, as the receiving user sees it. */
export function unreadItemOf(message: any, flags: string[], userId: number): UnreadItem {
  const mention = mentionOf(flags);
  if (message.type === "stream") return { id: message.id, kind: "stream", streamId: message.stream_id, topic: message.subject, mention };
  const people: number[] = (message.display_recipient as Array<{ id: number }>).map((u) => u.id).sort((a, b) => a - b);
  if (people.length <= 2) return { id: message.id, kind: "pm", other: people.find((id) => id !== userId) ?? userId, mention };
  return { id: message.id, kind: "huddle", key: people.join(","), mention };
}

/**
 * The unread item for a message marked unread again, from the event's message_details, whose
 * `mentioned` says whether the message is in `mentions` (Zulip's format_unread_message_details).
 */
export function unreadItemFromDetails(id: number, d: any, userId: number): UnreadItem {
  const mention: Mention = d.mentioned ? "direct" : "none";
  if (d.type === "stream") return { id, kind: "stream", streamId: d.stream_id, topic: d.topic, mention };
  const others: number[] = d.user_ids;
  if (others.length <= 1) return { id, kind: "pm", other: others[0] ?? userId, mention };
  return { id, kind: "huddle", key: [...others, userId].sort((a, b) => a - b).join(","), mention };
}
