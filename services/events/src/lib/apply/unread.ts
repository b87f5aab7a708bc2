import type { State } from "./types";

/**
 * Register's `unread_msgs` kept as messaging builds it: unread message ids grouped by
 * conversation (in order of first unread id), mentions, and `count` without muted messages.
 * It is edited through a flat list of unread messages and rebuilt, so the grouping and order
 * match a fresh register.
 */
export type UnreadItem =
  | { id: number; kind: "pm"; other: number; mentioned: boolean }
  | { id: number; kind: "huddle"; key: string; mentioned: boolean }
  | { id: number; kind: "stream"; streamId: number; topic: string; mentioned: boolean };

export function flattenUnread(unread: any): UnreadItem[] {
  const mentions = new Set<number>(unread.mentions ?? []);
  const items: UnreadItem[] = [];
  for (const p of unread.pms ?? []) for (const id of p.unread_message_ids) items.push({ id, kind: "pm", other: p.other_user_id, mentioned: mentions.has(id) });
  for (const h of unread.huddles ?? []) for (const id of h.unread_message_ids) items.push({ id, kind: "huddle", key: h.user_ids_string, mentioned: mentions.has(id) });
  for (const s of unread.streams ?? []) {
    for (const id of s.unread_message_ids) items.push({ id, kind: "stream", streamId: s.stream_id, topic: s.topic, mentioned: mentions.has(id) });
  }
  return items.sort((a, b) => a.id - b.id);
}

/** Whether a channel message is muted for the user; null when the state cannot tell. */
export function mutedIn(state: State): ((streamId: number, topic: string) => boolean) | null {
  const subs = [...(state.subscriptions ?? []), ...(state.unsubscribed ?? [])];
  if (!Array.isArray(state.subscriptions) || !Array.isArray(state.user_topics)) return null;
  const streamMuted = new Map<number, boolean>(subs.map((s: any) => [s.stream_id, Boolean(s.is_muted)]));
  const policy = new Map<string, number>(state.user_topics.map((t: any) => [`${t.stream_id}:${String(t.topic_name).toLowerCase()}`, t.visibility_policy]));
  return (streamId, topic) => {
    const p = policy.get(`${streamId}:${topic.toLowerCase()}`) ?? 0;
    return p === 1 || (Boolean(streamMuted.get(streamId)) && p !== 2 && p !== 3);
  };
}

/** Rebuilds unread_msgs from the flat list; false when muting is needed and unknown. */
export function rebuildUnread(state: State, items: UnreadItem[]): boolean {
  const muted = mutedIn(state);
  if (!muted && items.some((i) => i.kind === "stream")) return false;
  items.sort((a, b) => a.id - b.id);
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  let count = 0;
  for (const i of items) {
    if (i.kind === "pm") pms.set(i.other, [...(pms.get(i.other) ?? []), i.id]);
    else if (i.kind === "huddle") huddles.set(i.key, [...(huddles.get(i.key) ?? []), i.id]);
    else {
      const key = `${i.streamId}:${i.topic.toLowerCase()}`;
      const entry = streams.get(key) ?? { stream_id: i.streamId, topic: i.topic, unread_message_ids: [] };
      entry.unread_message_ids.push(i.id);
      streams.set(key, entry);
    }
    if (i.kind !== "stream" || !muted!(i.streamId, i.topic)) count += 1;
  }
  state.unread_msgs = {
    ...state.unread_msgs,
    count,
    pms: [...pms].map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
    streams: [...streams.values()],
    huddles: [...huddles].map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
    mentions: items.filter((i) => i.mentioned).map((i) => i.id),
  };
  return true;
}

const WILDCARD = ["stream_wildcard_mentioned", "topic_wildcard_mentioned", "wildcard_mentioned"];

/** The unread item for a message event's message, as the receiving user sees it. */
export function unreadItemOf(state: State, message: any, flags: string[], userId: number): UnreadItem | null {
  const direct = flags.includes("mentioned");
  const wildcard = WILDCARD.some((f) => flags.includes(f));
  if (message.type === "stream") {
    const muted = mutedIn(state);
    if (!muted) return null;
    const isMuted = muted(message.stream_id, message.subject);
    return { id: message.id, kind: "stream", streamId: message.stream_id, topic: message.subject, mentioned: direct || (wildcard && !isMuted) };
  }
  const people: number[] = (message.display_recipient as Array<{ id: number }>).map((u) => u.id).sort((a, b) => a - b);
  if (people.length <= 2) {
    return { id: message.id, kind: "pm", other: people.find((id) => id !== userId) ?? userId, mentioned: direct || wildcard };
  }
  return { id: message.id, kind: "huddle", key: people.join(","), mentioned: direct || wildcard };
}

/** The unread item for a message marked unread again, from the event's message_details. */
export function unreadItemFromDetails(id: number, d: any, userId: number): UnreadItem {
  const mentioned = Boolean(d.mentioned);
  if (d.type === "stream") return { id, kind: "stream", streamId: d.stream_id, topic: d.topic, mentioned };
  const others: number[] = d.user_ids;
  if (others.length <= 1) return { id, kind: "pm", other: others[0] ?? userId, mentioned };
  return { id, kind: "huddle", key: [...others, userId].sort((a, b) => a - b).join(","), mentioned };
}
