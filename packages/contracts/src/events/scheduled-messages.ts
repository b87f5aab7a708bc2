import { z } from "zod";
import { ClientNotice } from "../envelope";
import { ScheduledMessage } from "../routes/scheduled-messages";
import { defineEvent } from "./index";

/** Client events (GET /events) about the sender's scheduled messages. */
export const ScheduledMessagesAddEvent = z.strictObject({
  type: z.literal("scheduled_messages"),
  op: z.literal("add"),
  scheduled_messages: z.array(ScheduledMessage),
});
export const ScheduledMessagesUpdateEvent = z.strictObject({
  type: z.literal("scheduled_messages"),
  op: z.literal("update"),
  scheduled_message: ScheduledMessage,
});
export const ScheduledMessagesRemoveEvent = z.strictObject({
  type: z.literal("scheduled_messages"),
  op: z.literal("remove"),
  scheduled_message_id: z.number().int(),
});
export const ScheduledMessagesEvent = z.union([ScheduledMessagesAddEvent, ScheduledMessagesUpdateEvent, ScheduledMessagesRemoveEvent]);
export type ScheduledMessagesEvent = z.infer<typeof ScheduledMessagesEvent>;

const notice = <E extends z.ZodType>(event: E) => ClientNotice.extend({ event });

const base = { sender_id: z.number().int(), scheduled_message_id: z.number().int() };

/** Scheduled: the sender's clients get `scheduled_messages/add`. */
export const SchedulerMessageScheduled = defineEvent(
  "scheduler.scheduled_message.created",
  z.object({ ...base, client: notice(ScheduledMessagesAddEvent) }),
);
/** Edited by the sender, or marked failed by the delivery loop (`failure_reason` then set). */
export const SchedulerMessageUpdated = defineEvent(
  "scheduler.scheduled_message.updated",
  z.object({ ...base, failure_reason: z.string().nullable().optional(), client: notice(ScheduledMessagesUpdateEvent) }),
);
/** Deleted by the sender. */
export const SchedulerMessageDeleted = defineEvent(
  "scheduler.scheduled_message.deleted",
  z.object({ ...base, client: notice(ScheduledMessagesRemoveEvent) }),
);
/** Sent by the delivery loop as message `message_id`; it leaves the sender's list. */
export const SchedulerMessageDelivered = defineEvent(
  "scheduler.scheduled_message.delivered",
  z.object({ ...base, message_id: z.number().int(), client: notice(ScheduledMessagesRemoveEvent) }),
);
