import { z } from "zod";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/** A user in a typing event: id and API email (the one everybody may see). */
export const TypingUser = z.strictObject({ user_id: z.number().int(), email: z.string() });

/** Someone is (`start`) or was (`stop`) composing a direct message; `recipients` include the sender. */
export const TypingDirectClientEvent = z.strictObject({
  type: z.literal("typing"),
  op: z.enum(["start", "stop"]),
  message_type: z.literal("direct"),
  sender: TypingUser,
  recipients: z.array(TypingUser),
});

/** Someone is or was composing in a channel's topic (only queues with `stream_typing_notifications` take it). */
export const TypingStreamClientEvent = z.strictObject({
  type: z.literal("typing"),
  op: z.enum(["start", "stop"]),
  message_type: z.literal("stream"),
  sender: TypingUser,
  stream_id: z.number().int(),
  topic: z.string(),
});

export const TypingClientEvent = z.union([TypingDirectClientEvent, TypingStreamClientEvent]);
export type TypingClientEvent = z.infer<typeof TypingClientEvent>;

const TypingNotice = z.object({ sender_id: z.number().int(), client: noticeOf(TypingClientEvent) });

/** Stateless news (nothing is stored): a typing event for the users who would receive the message. */
export const MessagingTypingStarted = defineEvent("messaging.typing.started", TypingNotice);
export const MessagingTypingStopped = defineEvent("messaging.typing.stopped", TypingNotice);
