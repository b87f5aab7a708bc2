import { z } from "zod";
import { EditHistoryEntry, PropagateMode } from "../routes/messages";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";
import { ExpiredMessagesDeleteEvent } from "./retention";

/**
 * `update_message` as Zulip 9.0 (feature level 267) sends it: always who edited, when, the
 * message and the ids a topic or channel change applies to; the content fields only for a
 * content edit; `stream_id`/`stream_name` for a channel message; `orig_subject`,
 * `propagate_mode` for a move, with `subject`/`topic_links` when the topic changed and
 * `new_stream_id` when the channel did. Each receiver's `flags` for the message ride in the
 * notice's users (and the events service adds them to the event).
 */
export const UpdateMessageClientEvent = z.strictObject({
  type: z.literal("update_message"),
  user_id: z.number().int().nullable(),
  edit_timestamp: z.number().int(),
  message_id: z.number().int(),
  message_ids: z.array(z.number().int()),
  rendering_only: z.boolean(),
  stream_name: z.string().optional(),
  stream_id: z.number().int().optional(),
  new_stream_id: z.number().int().optional(),
  propagate_mode: PropagateMode.optional(),
  orig_subject: z.string().optional(),
  subject: z.string().optional(),
  topic_links: z.array(z.strictObject({ text: z.string(), url: z.string() })).optional(),
  orig_content: z.string().optional(),
  orig_rendered_content: z.string().optional(),
  prev_rendered_content_version: z.number().int().optional(),
  content: z.string().optional(),
  rendered_content: z.string().optional(),
  is_me_message: z.boolean().optional(),
});

/** A message was edited, moved, or both (PATCH /messages/{id}). */
export const MessagingMessageUpdated = defineEvent(
  "messaging.message.updated",
  z.object({
    message_id: z.number().int(),
    message_ids: z.array(z.number().int()),
    /** The edit as stored in the edited message's history. */
    edit: EditHistoryEntry,
    client: noticeOf(UpdateMessageClientEvent),
  }),
);

/**
 * Messages moved to a channel some of their readers may not access: to those readers it is a
 * deletion (`delete_message` with the ids, the old channel and topic), as in Zulip.
 */
export const MessagingMessagesMovedAway = defineEvent(
  "messaging.messages.moved_away",
  z.object({ message_ids: z.array(z.number().int()), client: noticeOf(ExpiredMessagesDeleteEvent) }),
);
