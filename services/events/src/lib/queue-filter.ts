import { gravatarUrl, type ClientNotice } from "@chat/contracts";
import { matchesNarrow, type NarrowTerm } from "./narrow";

/** What a queue was registered with: everything that decides what it receives and in which form. */
export interface QueueDescriptor {
  id: string;
  userId: number;
  realmId: number;
  /** null: every type. */
  eventTypes: string[] | null;
  narrow: NarrowTerm[];
  allPublicStreams: boolean;
  capabilities: Record<string, boolean>;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  /** Register's include_subscribers: whether channel objects in events keep `subscribers`. */
  includeSubscribers: boolean;
  /** Register's slim_presence: presence events come without the deprecated `email`. */
  slimPresence: boolean;
  lifespanSecs: number;
}

type Event = Record<string, unknown> & { type: string };

/** Zulip's rules for which events a queue takes, beyond the producer's choice of users. */
export function acceptsEvent(queue: QueueDescriptor, event: Event): boolean {
  const caps = queue.capabilities;
  if (queue.eventTypes !== null) {
    if (!queue.eventTypes.includes(event.type)) return false;
    // The newer user_topic events carry the same information.
    if (event.type === "muted_topics" && queue.eventTypes.includes("user_topic")) return false;
  }
  switch (event.type) {
    case "message":
      return matchesNarrow(queue.narrow, (event.message ?? {}) as Record<string, unknown>, (event.flags ?? []) as string[]);
    case "typing":
      return !("stream_id" in event) || caps.stream_typing_notifications === true;
    case "update_display_settings":
    case "update_global_notifications":
      // Legacy copies of user_settings events, only for clients that do not understand those.
      return caps.user_settings_object !== true;
    case "realm_linkifiers":
      return caps.linkifier_url_template === true;
    default:
      return true;
  }
}

function messageForQueue(queue: QueueDescriptor, event: Event, senderQueue: ClientNotice["sender_queue"]): Event {
  const { markdown_content: markdown, sender_avatar_url: avatarUrl, ...rest } = event;
  const message = { ...(rest.message as Record<string, unknown>) };
  if (!queue.applyMarkdown && typeof markdown === "string") {
    message.content = markdown;
    message.content_type = "text/x-markdown";
  }
  // Messaging leaves avatar_url null where clients may compute the Gravatar, and gives the URL
  // beside the message for the others (a previous release did not: its sender's version 1).
  if (!queue.clientGravatar && message.avatar_url === null) {
    if (typeof avatarUrl === "string") message.avatar_url = avatarUrl;
    else if (typeof message.sender_email === "string") message.avatar_url = gravatarUrl(message.sender_email, 1);
  }
  const out: Event = { ...rest, message };
  if (senderQueue && senderQueue.queue_id === queue.id && message.sender_id === queue.userId) {
    // Zulip clients read local_message_id; our spec names local_id. Both, in this queue only.
    out.local_message_id = senderQueue.local_id;
    out.local_id = senderQueue.local_id;
  }
  return out;
}

function updateMessageForQueue(event: Event): Event {
  // update_message carries both forms (content = Markdown, rendered_content = HTML), as in Zulip.
  const { markdown_content: markdown, ...rest } = event;
  if (typeof markdown === "string") {
    if (typeof rest.content === "string" && rest.rendered_content === undefined) rest.rendered_content = rest.content;
    rest.content = markdown;
  }
  return rest as Event;
}

/**
 * Producers put `subscribers` on every channel object they send (one notice for all queues);
 * queues registered without include_subscribers get the objects without it, as in Zulip.
 */
function withoutSubscribers(event: Event, listKey: "subscriptions" | "streams"): Event {
  const list = event[listKey];
  if (!Array.isArray(list) || !list.some((o) => o !== null && typeof o === "object" && "subscribers" in o)) return event;
  return {
    ...event,
    [listKey]: list.map((o) => {
      if (o === null || typeof o !== "object") return o;
      const { subscribers: _s, ...rest } = o as Record<string, unknown>;
      return rest;
    }),
  };
}

function deleteMessageForQueue(queue: QueueDescriptor, event: Event): Event[] {
  const { message_id: one, message_ids: many, ...rest } = event;
  const ids = Array.isArray(many) ? (many as number[]) : typeof one === "number" ? [one] : null;
  if (ids === null) return [event];
  if (queue.capabilities.bulk_message_deletion === true) return [{ ...rest, message_ids: ids } as Event];
  // Older clients handle one message per event.
  return ids.map((id) => ({ ...rest, message_id: id }) as Event);
}

/**
 * The events one queue gets for one notice (none, one, or several for split deletions), in the
 * form that queue asked for. `flags` are the receiving user's, when the producer gave them.
 */
export function eventsForQueue(queue: QueueDescriptor, notice: ClientNotice, flags: string[] | undefined): Event[] {
  if (notice.capability !== undefined && queue.capabilities[notice.capability] !== true) return [];
  if (notice.without_capability !== undefined && queue.capabilities[notice.without_capability] === true) return [];
  let event: Event = { ...(notice.event as Event) };
  if (flags !== undefined) event.flags = flags;
  else if (event.type === "message") event.flags = [];
  if (!acceptsEvent(queue, event)) return [];
  switch (event.type) {
    case "message":
      event = messageForQueue(queue, event, notice.sender_queue);
      break;
    case "update_message":
      event = updateMessageForQueue(event);
      break;
    case "delete_message":
      return deleteMessageForQueue(queue, event);
    case "subscription":
      if (event.op === "add" && !queue.includeSubscribers) event = withoutSubscribers(event, "subscriptions");
      break;
    case "stream":
      if (event.op === "create" && !queue.includeSubscribers) event = withoutSubscribers(event, "streams");
      break;
    case "presence":
      // As Zulip's Tornado does for slim_presence clients (they key presence by user id).
      if (queue.slimPresence) delete event.email;
      break;
    case "user_group":
      // A deactivated group is gone for clients that do not list deactivated groups (Zulip's
      // process_deactivate_user_group_event, feature level 294).
      if (event.op === "update" && (event.data as Record<string, unknown> | undefined)?.deactivated === true && queue.capabilities.include_deactivated_groups !== true) {
        return [{ type: "user_group", op: "remove", group_id: event.group_id }];
      }
      break;
  }
  return [event];
}
