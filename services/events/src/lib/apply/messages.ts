import { aggregateUnread } from "@chat/contracts";
import { fetched, sortedUnique, type Applier, type State } from "./types";
import { editUnread, flattenUnread, mentionOf, unreadItemFromDetails, unreadItemOf } from "./unread";

function touchRecentConversation(state: State, message: any, userId: number): void {
  if (!Array.isArray(state.recent_private_conversations) || message.type !== "private") return;
  const others = sortedUnique((message.display_recipient as Array<{ id: number }>).map((u) => u.id)).filter((id) => id !== userId);
  const key = others.join(",");
  const list = state.recent_private_conversations as Array<{ max_message_id: number; user_ids: number[] }>;
  const existing = list.find((c) => [...c.user_ids].sort((a, b) => a - b).join(",") === key);
  if (existing) existing.max_message_id = Math.max(existing.max_message_id, message.id);
  else list.push({ max_message_id: message.id, user_ids: others });
  list.sort((a, b) => b.max_message_id - a.max_message_id);
}

/** A channel without messages has its first now (a new channel's): as a fresh register shows it. */
function setFirstMessageId(state: State, streamId: number, messageId: number): void {
  for (const key of ["streams", "subscriptions", "unsubscribed", "never_subscribed"]) {
    for (const s of state[key] ?? []) if (s.stream_id === streamId && s.first_message_id === null) s.first_message_id = messageId;
  }
}

/**
 * Whether a move between channels took the messages from the user: a subscriber of the old
 * channel who is not subscribed to the new one loses them (messaging drops their rows, as
 * Zulip does), though the event is an update_message (those who cannot read the new channel
 * at all get a delete_message instead). Null when the state cannot tell and it matters.
 */
function leftBehind(state: State, from: number, to: number, ids: number[]): boolean | null {
  if (Array.isArray(state.subscriptions)) {
    const subscribed = (id: number) => state.subscriptions.some((s: any) => s.stream_id === id);
    return subscribed(from) && !subscribed(to);
  }
  const held = ids.includes(state.max_message_id) || (Array.isArray(state.starred_messages) && state.starred_messages.some((id: number) => ids.includes(id)));
  return held || (state.unread_msgs && flattenUnread(state).some((i) => ids.includes(i.id))) ? null : false;
}

/** Messages the user no longer has: gone from unread and starred; the newest one gone needs the database. */
function forgetMessages(state: State, ids: number[]): boolean {
  if (typeof state.max_message_id === "number" && ids.includes(state.max_message_id)) return false;
  if (!editUnread(state, (items) => items.filter((i) => !ids.includes(i.id)))) return false;
  if (Array.isArray(state.starred_messages)) state.starred_messages = state.starred_messages.filter((id: number) => !ids.includes(id));
  return true;
}

export const messageAppliers: Record<string, Applier> = {
  message(state, event, ctx) {
    if (!fetched(ctx, "message")) return false;
    const message = event.message;
    const flags: string[] = event.flags ?? [];
    if (typeof state.max_message_id === "number") state.max_message_id = Math.max(state.max_message_id, message.id);
    if (!flags.includes("read") && !editUnread(state, (items) => [...items, unreadItemOf(message, flags, ctx.userId)])) return false;
    if (Array.isArray(state.starred_messages) && flags.includes("starred")) {
      state.starred_messages = sortedUnique([...state.starred_messages, message.id]);
    }
    touchRecentConversation(state, message, ctx.userId);
    if (message.type === "stream") setFirstMessageId(state, message.stream_id, message.id);
    return true;
  },

  update_message_flags(state, event, ctx) {
    if (!fetched(ctx, "update_message_flags") && !fetched(ctx, "starred_messages")) return false;
    const ids: number[] = event.messages ?? [];
    const add = event.op === "add";
    if (event.flag === "starred" && Array.isArray(state.starred_messages)) {
      const set = new Set<number>(state.starred_messages);
      for (const id of ids) add ? set.add(id) : set.delete(id);
      state.starred_messages = sortedUnique(set);
    }
    if (event.flag === "read" && add && event.all) {
      // Everything read: nothing older is missing either.
      if (state.unread_msgs) state.unread_msgs = aggregateUnread([], false);
    } else if (event.flag === "read") {
      const applied = editUnread(state, (items) => {
        if (add) return items.filter((i) => !ids.includes(i.id));
        const added = [];
        for (const id of ids) {
          const details = event.message_details?.[String(id)];
          // No details: a message register does not show (in a channel the user left).
          if (details && !items.some((i) => i.id === id)) added.push(unreadItemFromDetails(id, details, ctx.userId));
        }
        return [...items, ...added];
      });
      if (!applied) return false;
    }
    return true;
  },

  delete_message(state, event) {
    const ids: number[] = event.message_ids ?? (typeof event.message_id === "number" ? [event.message_id] : []);
    // The newest message gone: the new maximum (or a conversation's) needs the database.
    if (typeof state.max_message_id === "number" && ids.includes(state.max_message_id)) return false;
    if (Array.isArray(state.recent_private_conversations) && state.recent_private_conversations.some((c: any) => ids.includes(c.max_message_id))) return false;
    return forgetMessages(state, ids);
  },

  /**
   * Moves between topics and channels change the conversation of unread messages (Zulip's
   * apply_event for update_message); an edit's flags say how the edited message mentions the user.
   * Nothing else of register's state holds messages.
   */
  update_message(state, event) {
    const ids: number[] = event.message_ids ?? [event.message_id];
    const topic: string | undefined = event.subject;
    const streamId: number | undefined = event.new_stream_id;
    if (streamId !== undefined && typeof event.stream_id === "number") {
      const left = leftBehind(state, event.stream_id, streamId, ids);
      if (left === null) return false;
      if (left) return forgetMessages(state, ids);
    }
    return editUnread(state, (items) => items.map((i) => {
      if (!ids.includes(i.id)) return i;
      const moved = i.kind === "stream" ? { ...i, streamId: streamId ?? i.streamId, topic: topic ?? i.topic } : i;
      return i.id === event.message_id && Array.isArray(event.flags) ? { ...moved, mention: mentionOf(event.flags) } : moved;
    }));
  },
};
