import { z } from "zod";

/**
 * Register's `unread_msgs`, and the one rule that builds it from unread messages: messaging's
 * register and the events service's appliers both use it, so a state kept up to date by events
 * is the state a fresh register shows.
 */

const Ids = z.array(z.number().int());

export const UnreadMsgs = z.strictObject({
  count: z.number().int(),
  pms: z.array(z.strictObject({ other_user_id: z.number().int(), sender_id: z.number().int(), unread_message_ids: Ids })),
  streams: z.array(z.strictObject({ stream_id: z.number().int(), topic: z.string(), unread_message_ids: Ids })),
  huddles: z.array(z.strictObject({ user_ids_string: z.string(), unread_message_ids: Ids })),
  mentions: Ids,
  old_unreads_missing: z.boolean(),
});
export type UnreadMsgs = z.infer<typeof UnreadMsgs>;

/** Zulip's MAX_UNREAD_MESSAGES: register considers the newest this many unread messages. */
export const MAX_UNREAD_MESSAGES = 50000;

export type UnreadConversation =
  | { kind: "pm"; /** The other participant; the user themself for a message to themself. */ other: number }
  | { kind: "huddle"; /** All participants' ids, ascending, comma-separated. */ key: string }
  | { kind: "stream"; streamId: number; topic: string };

export type UnreadEntry = UnreadConversation & {
  id: number;
  /** Counts toward `count`: a direct message, or a channel message not muted for the user. */
  counted: boolean;
  /** In `mentions`: mentioned directly, or through a wildcard where not muted. */
  listed: boolean;
};

/**
 * Python's string order (by code point), which differs from JavaScript's (by UTF-16 unit) only
 * where a character above U+FFFF meets one in U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    if (sx !== sy) return sx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

function bucketOf<K>(map: Map<K, number[]>, key: K): number[] {
  let ids = map.get(key);
  if (!ids) map.set(key, (ids = []));
  return ids;
}

/**
 * Zulip's aggregate_unread_data: one bucket per conversation, its ids ascending. Channel buckets
 * are keyed by channel and lower-cased topic (topics differing only in case are one topic) and
 * show the topic as the oldest unread message spells it; buckets come sorted by their keys:
 * (stream_id, lower-cased topic), other_user_id, user_ids_string (as a string).
 */
export function aggregateUnread(entries: readonly UnreadEntry[], oldUnreadsMissing: boolean): UnreadMsgs {
  const sorted = [...entries].sort((a, b) => a.id - b.id);
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const streams = new Map<string, { streamId: number; lower: string; topic: string; ids: number[] }>();
  for (const e of sorted) {
    if (e.kind === "pm") bucketOf(pms, e.other).push(e.id);
    else if (e.kind === "huddle") bucketOf(huddles, e.key).push(e.id);
    else {
      const lower = e.topic.toLowerCase();
      const key = `${e.streamId}\u0000${lower}`;
      const bucket = streams.get(key) ?? { streamId: e.streamId, lower, topic: e.topic, ids: [] };
      bucket.ids.push(e.id);
      streams.set(key, bucket);
    }
  }
  return {
    count: sorted.filter((e) => e.counted).length,
    pms: [...pms].sort(([a], [b]) => a - b).map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
    streams: [...streams.values()]
      .sort((a, b) => a.streamId - b.streamId || compareCodePoints(a.lower, b.lower))
      .map((s) => ({ stream_id: s.streamId, topic: s.topic, unread_message_ids: s.ids })),
    huddles: [...huddles].sort(([a], [b]) => compareCodePoints(a, b)).map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
    mentions: sorted.filter((e) => e.listed).map((e) => e.id),
    old_unreads_missing: oldUnreadsMissing,
  };
}
