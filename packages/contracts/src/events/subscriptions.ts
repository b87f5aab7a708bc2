import { z } from "zod";
import { StreamObject } from "../routes/streams";
import { SubscriptionObject } from "../routes/subscriptions";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";
import { ExpiredMessagesDeleteEvent } from "./retention";

export const StreamCreateClientEvent = z.strictObject({
  type: z.literal("stream"),
  op: z.literal("create"),
  streams: z.array(StreamObject),
});

/** Sent to a user who lost sight of a channel (left a private one, not an administrator; a guest left a public one). */
export const StreamDeleteClientEvent = z.strictObject({
  type: z.literal("stream"),
  op: z.literal("delete"),
  streams: z.array(StreamObject),
});

/** A channel's property changed; sent to everyone who can see the channel. */
export const StreamUpdateClientEvent = z.strictObject({
  type: z.literal("stream"),
  op: z.literal("update"),
  stream_id: z.number().int(),
  name: z.string(),
  property: z.string(),
  value: z.union([z.string(), z.number(), z.boolean(), z.null()]),
  /** Only with property `description`. */
  rendered_description: z.string().optional(),
  /** Only with property `invite_only`: the channel's whole privacy after the change. */
  history_public_to_subscribers: z.boolean().optional(),
  is_web_public: z.boolean().optional(),
});

export const SubscriptionAddClientEvent = z.strictObject({
  type: z.literal("subscription"),
  op: z.literal("add"),
  subscriptions: z.array(SubscriptionObject),
});

export const SubscriptionRemoveClientEvent = z.strictObject({
  type: z.literal("subscription"),
  op: z.literal("remove"),
  subscriptions: z.array(z.strictObject({ stream_id: z.number().int(), name: z.string() })),
});

export const SubscriptionUpdateClientEvent = z.strictObject({
  type: z.literal("subscription"),
  op: z.literal("update"),
  stream_id: z.number().int(),
  property: z.string(),
  value: z.union([z.boolean(), z.string(), z.number()]),
});

export const SubscriptionPeerClientEvent = z.strictObject({
  type: z.literal("subscription"),
  op: z.enum(["peer_add", "peer_remove"]),
  stream_ids: z.array(z.number().int()),
  user_ids: z.array(z.number().int()),
});

/**
 * The organization's default channels changed: the whole list, in name order, as Zulip sent it
 * before feature level 330 (channel objects, not ids); to every active non-guest user.
 */
export const DefaultStreamsClientEvent = z.strictObject({
  type: z.literal("default_streams"),
  default_streams: z.array(StreamObject.omit({ is_default: true, subscribers: true })),
});

export const MessagingStreamCreated = defineEvent(
  "messaging.stream.created",
  z.object({ stream_id: z.number().int(), client: noticeOf(StreamCreateClientEvent) }),
);
/** A stream create to a user who can now see a channel they could not (subscribed to it). */
export const MessagingStreamRevealed = defineEvent(
  "messaging.stream.revealed",
  z.object({ stream_id: z.number().int(), user_id: z.number().int(), client: noticeOf(StreamCreateClientEvent) }),
);
export const MessagingStreamHidden = defineEvent(
  "messaging.stream.hidden",
  z.object({ stream_id: z.number().int(), user_id: z.number().int(), client: noticeOf(StreamDeleteClientEvent) }),
);
/** A channel was deleted: a stream delete (with its name before) to everyone who could see it. */
export const MessagingStreamDeleted = defineEvent(
  "messaging.stream.deleted",
  z.object({ stream_id: z.number().int(), client: noticeOf(StreamDeleteClientEvent) }),
);
export const MessagingStreamUpdated = defineEvent(
  "messaging.stream.updated",
  z.object({ stream_id: z.number().int(), client: noticeOf(StreamUpdateClientEvent) }),
);
export const MessagingSubscriptionAdded = defineEvent(
  "messaging.subscription.added",
  z.object({ user_id: z.number().int(), stream_ids: z.array(z.number().int()), client: noticeOf(SubscriptionAddClientEvent) }),
);
export const MessagingSubscriptionRemoved = defineEvent(
  "messaging.subscription.removed",
  z.object({ user_id: z.number().int(), stream_ids: z.array(z.number().int()), client: noticeOf(SubscriptionRemoveClientEvent) }),
);
export const MessagingSubscriptionUpdated = defineEvent(
  "messaging.subscription.updated",
  z.object({ user_id: z.number().int(), client: noticeOf(SubscriptionUpdateClientEvent) }),
);
export const MessagingSubscriptionPeerAdded = defineEvent(
  "messaging.subscription.peer_added",
  z.object({ client: noticeOf(SubscriptionPeerClientEvent) }),
);
export const MessagingSubscriptionPeerRemoved = defineEvent(
  "messaging.subscription.peer_removed",
  z.object({ client: noticeOf(SubscriptionPeerClientEvent) }),
);
export const MessagingDefaultStreamsUpdated = defineEvent(
  "messaging.default_streams.updated",
  z.object({ client: noticeOf(DefaultStreamsClientEvent) }),
);
/** Users who could not see channels before a change of their privacy or of the users' role, and can now: a stream create. */
export const MessagingStreamAccessGained = defineEvent(
  "messaging.stream.access_gained",
  z.object({ stream_ids: z.array(z.number().int()), client: noticeOf(StreamCreateClientEvent) }),
);
/** Users who could see channels before such a change and cannot now: a stream delete. */
export const MessagingStreamAccessLost = defineEvent(
  "messaging.stream.access_lost",
  z.object({ stream_ids: z.array(z.number().int()), client: noticeOf(StreamDeleteClientEvent) }),
);
/** One batch of a topic deleted by POST /streams/{id}/delete_topic: a delete_message with `message_ids`. */
export const MessagingTopicMessagesDeleted = defineEvent(
  "messaging.topic.messages_deleted",
  z.object({ message_ids: z.array(z.number().int()), client: noticeOf(ExpiredMessagesDeleteEvent) }),
);
