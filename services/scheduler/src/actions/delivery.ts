import { ApiError, emitEvent, withTx, type Queryable } from "@chat/platform";
import { identityOf, isRefusal, isRetryable } from "../clients/services";
import type { SchedulerDeps } from "../deps";
import { claimNextDue, markDelivered, markFailed, type ScheduledMessageRow } from "../store/scheduled-messages";
import { notifyUpdated } from "./scheduled-messages";

export type DeliveryResult =
  | { outcome: "idle" }
  /** Claimed by another claimer of the same pass meanwhile (see `passed`): nothing done. */
  | { outcome: "skipped"; id: number }
  | { outcome: "delivered" | "failed"; id: number }
  /** Not attempted to the end: a retryable answer (isRetryable); the message stays due. */
  | { outcome: "deferred"; id: number; error: ApiError };

/** Test seams: run code at points where a real process could die. */
export interface DeliveryHooks {
  /** After messaging accepted the message, before the scheduler recorded it. */
  afterSend?: (row: ScheduledMessageRow, messageId: number) => Promise<void> | void;
}

/** The key messaging deduplicates sends by: one message per scheduled message, however many attempts. */
export const deliveryKey = (row: Pick<ScheduledMessageRow, "id">) => `scheduled:${row.id}`;

class Refused extends Error {}

/**
 * Delivers the next due scheduled message, if any. The row is claimed with `FOR UPDATE SKIP
 * LOCKED` and stays locked while messaging sends it, so replicas never pick the same row; the
 * send is idempotent, so a process that dies after sending but before committing (the row unlocks
 * and is picked again) still produces one message. Messaging's refusal (the sender lost
 * permission, the channel is gone, ...) marks the message failed and tells the sender. A
 * retryable answer (isRetryable) rolls back and reports the row deferred, for the caller to retry
 * it later; any other error (a service unreachable) rolls back and is thrown.
 *
 * `passed`: the rows a pass has claimed already, or puts off; they are not claimed again, and the
 * claimed row is added to it while still locked, so that a pass's parallel claimers never try one
 * row twice (a deferred row unlocks before its claimer returns).
 */
export async function deliverNextDue(deps: SchedulerDeps, hooks: DeliveryHooks = {}, passed = new Set<number>()): Promise<DeliveryResult> {
  const claimed: { row?: ScheduledMessageRow } = {};
  try {
    return await withTx(deps.pool, async (tx): Promise<DeliveryResult> => {
      const row = await claimNextDue(tx, deps.clock.now(), [...passed]);
      if (!row) return { outcome: "idle" };
      if (passed.has(row.id)) return { outcome: "skipped", id: row.id };
      passed.add(row.id);
      claimed.row = row;
      return { outcome: await deliver(deps, tx, row, hooks), id: row.id };
    });
  } catch (err) {
    if (claimed.row && isRetryable(err)) return { outcome: "deferred", id: claimed.row.id, error: err };
    throw err;
  }
}

async function deliver(deps: SchedulerDeps, tx: Queryable, row: ScheduledMessageRow, hooks: DeliveryHooks): Promise<"delivered" | "failed"> {
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
    // Messaging answers a key it has seen with its message, before any check: its refusal means
    // nothing was sent. Our own checks come first, though, and an earlier attempt that messaging
    // accepted may have died before recording it: that message stands.
    if (err instanceof Refused) {
      const sent = await deps.messaging.sentWith(row.realmId, row.senderId, deliveryKey(row));
      if (sent !== null) {
        await recordDelivered(tx, row, sent);
        return "delivered";
      }
    }
    if (err instanceof Refused || isRefusal(err)) {
      await failDelivery(deps, tx, row, (err as Error).message);
      return "failed";
    }
    throw err;
  }
  await hooks.afterSend?.(row, messageId);
  await recordDelivered(tx, row, messageId);
  return "delivered";
}

/** The message is sent: it leaves the sender's list (one `remove`, for all their clients). */
async function recordDelivered(tx: Queryable, row: ScheduledMessageRow, messageId: number): Promise<void> {
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
}

/** Replicas' clocks may differ a little: a message this close to its time may be in another's pass. */
const CLOCK_SKEW_MS = 60_000;

/**
 * Whether a scheduled message the caller holds locked (so no attempt is in progress) was
 * delivered, recording it first when an attempt messaging accepted died before it could (the
 * sender's clients then get the removal they were owed). Only a message whose time has come, or
 * that failed (so had come due), can have been attempted: messaging is asked about those only.
 */
export async function settleDelivery(deps: SchedulerDeps, tx: Queryable, row: ScheduledMessageRow): Promise<boolean> {
  if (row.delivered) return true;
  const mayHaveBeenAttempted = row.failureCount > 0 || row.scheduledAt.getTime() <= deps.clock.now().getTime() + CLOCK_SKEW_MS;
  if (!mayHaveBeenAttempted) return false;
  const sent = await deps.messaging.sentWith(row.realmId, row.senderId, deliveryKey(row));
  if (sent === null) return false;
  await recordDelivered(tx, row, sent);
  return true;
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
