import { z } from "zod";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/**
 * `delete_message` for a batch of one conversation's expired messages. The events service
 * delivers it as one event with `message_ids` to `bulk_message_deletion` clients and as one
 * event per message (`message_id`) to the others.
 */
export const ExpiredMessagesDeleteEvent = z.strictObject({
  type: z.literal("delete_message"),
  message_type: z.enum(["stream", "private"]),
  message_ids: z.array(z.number().int()),
  stream_id: z.number().int().optional(),
  topic: z.string().optional(),
});

/** The retention job deleted messages older than their channel's or organization's policy. */
export const MessagingMessagesExpired = defineEvent(
  "messaging.messages.expired",
  z.object({ message_ids: z.array(z.number().int()), client: noticeOf(ExpiredMessagesDeleteEvent) }),
);
