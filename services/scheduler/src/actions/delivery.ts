import { ApiError, emitEvent, withTx, type Queryable } from "@chat/platform";
import { identityOf, isRefusal } from "../clients/services";
import type { SchedulerDeps } from "../deps";
import { claimNextDue, markDelivered, markFailed, type ScheduledMessageRow } from "../store/scheduled-messages";
import { notifyUpdated } from "./scheduled-messages";

export type DeliveryOutcome = "idle" | "delivered" | "failed";

/** Test seams: run code at points where a real process could die. */
export interface DeliveryHooks {
  /** After messaging accepted the message, before the scheduler recorded it. */
  afterSend?: (row: ScheduledMessageRow, messageId: number) => Promise<void> | void;
}

/** The key messaging deduplicates sends by: one message per scheduled message, however many attempts. */
export const deliveryKey = (row: Pick<ScheduledMessageRow, "id">) => `scheduled:${row.id}`;

class Refused extends Error {}

/**
 * Delivers the next due scheduled message, if any. The row is claimed with
 * `FOR UPDATE SKIP LOCKED` and stays locked while messaging sends it, so replicas never pick the
 * same row; the send is idempotent, so a process that dies after sending but before committing
 * (the row unlocks and is picked again) still produces one message. Messaging's refusal (the
 * sender lost permission, the channel is gone, ...) marks the message failed and tells the
 * sender. Any other error (a service unreachable) rolls back: the message stays due and is
 * retried on a later pass.
 */
export async function deliverNextDue(deps: SchedulerDeps, hooks: DeliveryHooks = {}): Promise<DeliveryOutcome> {
  return withTx(deps.pool, async (tx) => {
    const row = await claimNextDue(tx, deps.clock.now());
    if (!row) return "idle";
    let messageId: number;
    try {
      // The organization and the sender are checked again as they are now, as Zulip does.
      const realm = await deps.accounts.getRealm(row.realmId);
      if (realm.deactivated) throw new Refused("This organization has been deactivated");
      const sender = await deps.accounts.getUser(row.realmId, row.senderId);
      if (!sender) throw new Refused("The sender no longer exists");
      if (!sender.is_active) throw new Refused("Account is deactivated");
      messageId = await deps.messaging.send(identityOf(sender, row.sendingClient), {
        type: row.recipientType,
        to: row.recipientType === "stream" ? (row.streamId as number) : (row.userIds as number[]),
        topic: row.recipientType === "stream" ? row.topic : null,
        content: row.content,
        read_by_sender: row.readBySender,
        idempotency_key: deliveryKey(row),
      });
    } catch (err) {
      if (err instanceof Refused || isRefusal(err)) {
        await failDelivery(deps, tx, row, (err as Error).message);
        return "failed";
      }
      throw err;
    }
    await hooks.afterSend?.(row, messageId);
    await markDelivered(tx, row.realmId, row.id, messageId);
    await emitEvent(tx, {
      type: "scheduler.scheduled_message.delivered",
      realmId: row.realmId,
      payload: {
        sender_id: row.senderId,
        scheduled_message_id: row.id,
        message_id: messageId,
        client: { event: { type: "scheduled_messages", op: "remove", scheduled_message_id: row.id }, users: [row.senderId] },
      },
    });
    return "delivered";
  });
}

async function failDelivery(deps: SchedulerDeps, tx: Queryable, row: ScheduledMessageRow, reason: string): Promise<void> {
  const failed = await markFailed(tx, row.realmId, row.id, reason);
  await notifyUpdated(tx, failed, reason);
  await notifyFailureByDirectMessage(deps, failed, reason);
}

/** The time as Zulip writes it in the notice (`2030-01-01 12:01:00+00:00`), inside `<time:...>`. */
function formatTime(at: Date): string {
  return at.toISOString().replace("T", " ").replace(/\.\d+Z$/, "+00:00");
}

/**
 * Zulip users found silent failures confusing: the realm's notification bot tells the sender.
 * Idempotent per failure (the key carries the failure count), so a retried pass does not repeat
 * it. A refusal here is logged and does not undo the failed state; an outage rolls back the pass.
 */
async function notifyFailureByDirectMessage(deps: SchedulerDeps, row: ScheduledMessageRow, reason: string): Promise<void> {
  try {
    const botId = await deps.accounts.getNotificationBotId(row.realmId);
    const bot = botId === null ? null : await deps.accounts.getUser(row.realmId, botId);
    if (!bot) {
      deps.log.warn({ realmId: row.realmId, scheduledMessageId: row.id }, "no notification bot; failure notice not sent");
      return;
    }
    // Zulip's wording: the time shown in the reader's time zone, the error quoted, and a link to
    // the list where the message waits to be rescheduled or deleted.
    const content =
      `The message you scheduled for <time:${formatTime(row.scheduledAt)}> was not sent because of the following error:\n\n` +
      `> ${reason}\n\n` +
      `[View scheduled messages](#scheduled)`;
    await deps.messaging.send(identityOf(bot, "Internal"), {
      type: "private",
      to: [row.senderId],
      content,
      idempotency_key: `scheduled-failure:${row.id}:${row.failureCount}`,
    });
  } catch (err) {
    // Only an outage is worth retrying the whole pass for; any other answer will not change.
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    deps.log.warn({ err: (err as Error).message, scheduledMessageId: row.id }, "failure notice refused");
  }
}
