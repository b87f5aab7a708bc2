import { z } from "zod";
import { ClientNotice } from "../envelope";
import { MessageObject } from "../routes/messages";
import { defineEvent } from "./index";

/** A ClientNotice whose event has a known shape. */
export const noticeOf = <E extends z.ZodType>(event: E) => ClientNotice.extend({ event });

/**
 * The `message` client event as messaging publishes it: rendered HTML in `message.content`
 * plus the raw Markdown in `markdown_content`; the events service picks one per queue
 * (apply_markdown) and removes `markdown_content`. Per-user `flags` ride in the notice's users.
 * `message.avatar_url` is the client_gravatar form (null only for a Gravatar the client can
 * compute); then `sender_avatar_url` is the URL for queues without client_gravatar, and the
 * events service removes it too.
 */
export const MessageClientEvent = z.strictObject({
  type: z.literal("message"),
  message: MessageObject.omit({ flags: true, match_content: true, match_subject: true }),
  markdown_content: z.string(),
  sender_avatar_url: z.string().optional(),
});

/** Per-message form; the events service turns it into `message_ids` for bulk_message_deletion clients. */
export const DeleteMessageClientEvent = z.strictObject({
  type: z.literal("delete_message"),
  message_type: z.enum(["stream", "private"]),
  message_id: z.number().int(),
  stream_id: z.number().int().optional(),
  topic: z.string().optional(),
});

export const UnreadMessageDetails = z.union([
  z.strictObject({
    type: z.literal("stream"),
    stream_id: z.number().int(),
    topic: z.string(),
    unmuted_stream_msg: z.boolean(),
    mentioned: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal("private"), user_ids: z.array(z.number().int()), mentioned: z.boolean().optional() }),
]);

export const UpdateMessageFlagsClientEvent = z.strictObject({
  type: z.literal("update_message_flags"),
  op: z.enum(["add", "remove"]),
  operation: z.enum(["add", "remove"]),
  flag: z.string(),
  messages: z.array(z.number().int()),
  all: z.boolean(),
  message_details: z.record(z.string(), UnreadMessageDetails).optional(),
});

export const MessagingMessageSent = defineEvent(
  "messaging.message.sent",
  z.object({
    message_id: z.number().int(),
    sender_id: z.number().int(),
    /** Users who received the message (a usermessage row), sender included. */
    user_ids: z.array(z.number().int()),
    stream_id: z.number().int().nullable(),
    topic: z.string().nullable(),
    client: noticeOf(MessageClientEvent),
  }),
);

export const MessagingMessageDeleted = defineEvent(
  "messaging.message.deleted",
  z.object({ message_id: z.number().int(), client: noticeOf(DeleteMessageClientEvent) }),
);

export const MessagingMessageFlagsUpdated = defineEvent(
  "messaging.message_flags.updated",
  z.object({ user_id: z.number().int(), client: noticeOf(UpdateMessageFlagsClientEvent) }),
);
