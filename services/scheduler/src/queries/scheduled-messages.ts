import type { ScheduledMessage } from "@chat/contracts";
import { resourceNotFound, type Identity, type Queryable } from "@chat/platform";
import { selectForSenderForUpdate, selectUndeliveredForSender, type ScheduledMessageRow } from "../store/scheduled-messages";

/** The client shape of a row (GET /scheduled_messages, register, events). */
export function formatScheduledMessage(row: ScheduledMessageRow): ScheduledMessage {
  const out: ScheduledMessage = {
    scheduled_message_id: row.id,
    type: row.recipientType,
    to: row.recipientType === "stream" ? (row.streamId as number) : (row.userIds as number[]),
    content: row.content,
    rendered_content: row.renderedContent,
    scheduled_delivery_timestamp: Math.floor(row.scheduledAt.getTime() / 1000),
    failed: row.failed,
  };
  if (row.recipientType === "stream") out.topic = row.topic ?? "";
  return out;
}

/** The caller's undelivered scheduled messages, failed ones included, by delivery time. */
export async function getScheduledMessages(db: Queryable, who: Identity): Promise<ScheduledMessage[]> {
  const rows = await selectUndeliveredForSender(db, who.realmId, who.userId);
  return rows.map(formatScheduledMessage);
}

/**
 * One of the caller's scheduled messages, locked for the rest of the transaction. Another
 * user's or organization's message answers exactly like a missing one.
 */
export async function accessScheduledMessage(db: Queryable, who: Identity, id: number): Promise<ScheduledMessageRow> {
  const row = await selectForSenderForUpdate(db, who.realmId, who.userId, id);
  if (!row) throw resourceNotFound("Scheduled message does not exist");
  return row;
}
