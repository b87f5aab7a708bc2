import { fetched, sortedUnique, type Applier, type State } from "./types";
import { flattenUnread, rebuildUnread, unreadItemFromDetails, unreadItemOf } from "./unread";

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

export const messageAppliers: Record<string, Applier> = {
  message(state, event, ctx) {
    if (!fetched(ctx, "message")) return false;
    const message = event.message;
    const flags: string[] = event.flags ?? [];
    if (typeof state.max_message_id === "number") state.max_message_id = Math.max(state.max_message_id, message.id);
    if (state.unread_msgs && !flags.includes("read")) {
      const items = flattenUnread(state.unread_msgs);
      if (!items.some((i) => i.id === message.id)) {
        const item = unreadItemOf(state, message, flags, ctx.userId);
        if (!item) return false;
        items.push(item);
        if (!rebuildUnread(state, items)) return false;
      }
    }
    if (Array.isArray(state.starred_messages) && flags.includes("starred")) {
      state.starred_messages = sortedUnique([...state.starred_messages, message.id]);
    }
    touchRecentConversation(state, message, ctx.userId);
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
    if (event.flag === "read" && state.unread_msgs) {
      let items = flattenUnread(state.unread_msgs);
      if (add) {
        items = event.all ? [] : items.filter((i) => !ids.includes(i.id));
      } else {
        for (const id of ids) {
          const details = event.message_details?.[String(id)];
          if (!details) return false;
          if (!items.some((i) => i.id === id)) items.push(unreadItemFromDetails(id, details, ctx.userId));
        }
      }
      if (!rebuildUnread(state, items)) return false;
    }
    return true;
  },

  delete_message(state, event) {
    const ids: number[] = event.message_ids ?? (typeof event.message_id === "number" ? [event.message_id] : []);
    // The newest message gone: the new maximum (or a conversation's) needs the database.
    if (typeof state.max_message_id === "number" && ids.includes(state.max_message_id)) return false;
    if (Array.isArray(state.recent_private_conversations) && state.recent_private_conversations.some((c: any) => ids.includes(c.max_message_id))) return false;
    if (state.unread_msgs) {
      const items = flattenUnread(state.unread_msgs);
      const left = items.filter((i) => !ids.includes(i.id));
      if (left.length !== items.length && !rebuildUnread(state, left)) return false;
    }
    if (Array.isArray(state.starred_messages)) state.starred_messages = state.starred_messages.filter((id: number) => !ids.includes(id));
    return true;
  },
};
