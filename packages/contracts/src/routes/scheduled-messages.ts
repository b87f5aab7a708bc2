import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/** One scheduled message as clients see it (GET /scheduled_messages, register, events). */
export const ScheduledMessage = z.strictObject({
  scheduled_message_id: z.number().int(),
  type: z.enum(["stream", "private"]),
  /** Channel id for channel messages; recipient user ids for direct messages. */
  to: z.union([z.number().int(), z.array(z.number().int())]),
  /** Only for channel messages. */
  topic: z.string().optional(),
  content: z.string(),
  rendered_content: z.string(),
  scheduled_delivery_timestamp: z.number().int(),
  failed: z.boolean(),
});
export type ScheduledMessage = z.infer<typeof ScheduledMessage>;

/** Accepted spellings of a message type; `channel`/`stream` and `direct`/`private` are equal. */
export const MessageTypeParam = z.enum(["direct", "channel", "stream", "private"], { message: "Invalid type" });

/** `to` of a scheduled message: a channel id, or a list of user ids (also `[channel_id]`). */
export const ScheduledTo = z.union([z.number().int(), z.array(z.number().int())], { message: "Invalid to" });

export const CreateScheduledMessage = route({
  method: "POST",
  path: "/scheduled_messages",
  service: "scheduler",
  auth: "user",
  params: {
    type: p.str(MessageTypeParam).required(),
    to: p.json(ScheduledTo).required(),
    content: p.str().required(),
    topic: p.str().alias("subject"),
    scheduled_delivery_timestamp: p.int().required(),
    read_by_sender: p.bool(),
  },
  response: success({ scheduled_message_id: z.number().int() }),
});

export const GetScheduledMessages = route({
  method: "GET",
  path: "/scheduled_messages",
  service: "scheduler",
  auth: "user",
  params: {},
  response: success({ scheduled_messages: z.array(ScheduledMessage) }),
});

export const UpdateScheduledMessage = route({
  method: "PATCH",
  path: "/scheduled_messages/{scheduled_message_id}",
  service: "scheduler",
  auth: "user",
  params: {
    scheduled_message_id: p.int().path(),
    type: p.str(MessageTypeParam),
    to: p.json(ScheduledTo),
    content: p.str(),
    topic: p.str().alias("subject"),
    scheduled_delivery_timestamp: p.int(),
  },
  response: empty,
});

export const DeleteScheduledMessage = route({
  method: "DELETE",
  path: "/scheduled_messages/{scheduled_message_id}",
  service: "scheduler",
  auth: "user",
  params: { scheduled_message_id: p.int().path() },
  response: empty,
});

/**
 * Messaging's dry run of a send: validates the addressee and content exactly as
 * `POST /messages` would for the caller (channel access and posting policy, recipients, wildcard
 * policy, limits), stores nothing, and returns the normalized content and its rendering. The
 * scheduler calls it when a message is scheduled or edited.
 */
export const InternalCheckMessage = route({
  method: "POST",
  path: "/internal/messages/check",
  service: "messaging",
  auth: "user",
  params: {
    type: p.str(MessageTypeParam).required(),
    to: p.str().required(),
    content: p.str().required(),
    topic: p.str().alias("subject"),
  },
  response: success({
    /** Content after Zulip's normalization (trailing whitespace, truncation). */
    content: z.string(),
    /** Normalized topic for channel messages; null for direct messages. */
    topic: z.string().nullable(),
    rendered_content: z.string(),
  }),
});
