import { directMessageTo } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { SchedulerDeps } from "../deps";
import { accessScheduledMessage, formatScheduledMessage } from "../queries/scheduled-messages";
import { deleteScheduledMessage, insertScheduledMessage, updateScheduledMessage, type ScheduledMessageRow } from "../store/scheduled-messages";
import { settleDelivery } from "./delivery";

/** Validated by the contract: `direct`, `channel`, `stream` or `private`. */
type InputType = string;
type RecipientType = "stream" | "private";

/** `channel` and `stream` name the same thing, as do `direct` and `private`. */
const recipientTypeOf = (t: InputType): RecipientType => (t === "channel" || t === "stream" ? "stream" : "private");

interface Addressee {
  recipientType: RecipientType;
  streamId: number | null;
  userIds: number[] | null;
}

/**
 * Reads `to` for a type the way Zulip's send does: one channel id, or a list of user ids, kept as
 * Zulip shows them (directMessageTo).
 */
function parseTo(recipientType: RecipientType, to: number | number[], senderId: number): Addressee {
  if (recipientType === "stream") {
    let id: number | number[] = to;
    if (Array.isArray(id)) {
      if (id.length > 1) throw badRequest("Cannot send to multiple channels");
      if (id.length === 0) throw badRequest("Missing channel");
      id = id[0];
    }
    return { recipientType, streamId: id, userIds: null };
  }
  if (!Array.isArray(to)) throw badRequest("Invalid data type for recipients");
  if (to.length === 0) throw badRequest("Message must have recipients");
  return { recipientType, streamId: null, userIds: directMessageTo(senderId, to) };
}

/** 9999-12-31T23:59:59Z: later times are not dates PostgreSQL (or anyone) can keep. */
const LAST_TIMESTAMP = 253_402_300_799;

function deliveryTime(deps: SchedulerDeps, timestamp: number): Date {
  if (timestamp > LAST_TIMESTAMP) throw badRequest("Invalid scheduled_delivery_timestamp");
  const at = new Date(timestamp * 1000);
  if (at.getTime() <= deps.clock.now().getTime()) throw badRequest("Scheduled delivery time must be in the future.");
  return at;
}

/** Messaging validates the addressee and content as a real send would, and renders it. */
async function checkWithMessaging(deps: SchedulerDeps, who: Identity, a: Addressee, topic: string | null, content: string) {
  const checked = await deps.messaging.check(who, {
    type: a.recipientType,
    to: a.recipientType === "stream" ? (a.streamId as number) : (a.userIds as number[]),
    topic: a.recipientType === "stream" ? topic : null,
    content,
  });
  return { content: checked.content, topic: a.recipientType === "stream" ? checked.topic ?? topic : null, renderedContent: checked.rendered_content };
}

/** The sender's clients get the whole changed object (an edit, or the failed state). */
export async function notifyUpdated(tx: Queryable, row: ScheduledMessageRow, failureReason?: string): Promise<void> {
  await emitEvent(tx, {
    type: "scheduler.scheduled_message.updated",
    realmId: row.realmId,
    payload: {
      sender_id: row.senderId,
      scheduled_message_id: row.id,
      ...(failureReason !== undefined ? { failure_reason: failureReason } : {}),
      client: {
        event: { type: "scheduled_messages", op: "update", scheduled_message: formatScheduledMessage(row) },
        users: [row.senderId],
      },
    },
  });
}

export interface ScheduleRequest {
  type: InputType;
  to: number | number[];
  content: string;
  topic: string | undefined;
  scheduledDeliveryTimestamp: number;
  readBySender: boolean | undefined;
}

/**
 * A direct message to nobody but the sender: a reminder to oneself. Unless the client said
 * otherwise, it arrives unread, whatever the client (Zulip's check_schedule_message); other
 * scheduled messages follow the sending client's default, as a send does.
 */
const isToSelfOnly = (a: Addressee, senderId: number) => a.recipientType === "private" && a.userIds?.length === 1 && a.userIds[0] === senderId;

/** POST /scheduled_messages: validate like a send, store, tell the sender's clients. */
export async function doScheduleMessage(deps: SchedulerDeps, who: Identity, req: ScheduleRequest): Promise<number> {
  const scheduledAt = deliveryTime(deps, req.scheduledDeliveryTimestamp);
  const addressee = parseTo(recipientTypeOf(req.type), req.to, who.userId);
  if (addressee.recipientType === "stream" && req.topic === undefined) throw badRequest("Missing topic");
  const checked = await checkWithMessaging(deps, who, addressee, req.topic ?? null, req.content);
  return withTx(deps.pool, async (tx) => {
    const row = await insertScheduledMessage(tx, {
      realmId: who.realmId,
      senderId: who.userId,
      ...addressee,
      topic: checked.topic,
      content: checked.content,
      renderedContent: checked.renderedContent,
      scheduledAt,
      readBySender: req.readBySender ?? (isToSelfOnly(addressee, who.userId) ? false : null),
      sendingClient: who.client,
      createdAt: deps.clock.now(),
    });
    await emitEvent(tx, {
      type: "scheduler.scheduled_message.created",
      realmId: row.realmId,
      payload: {
        sender_id: row.senderId,
        scheduled_message_id: row.id,
        client: { event: { type: "scheduled_messages", op: "add", scheduled_messages: [formatScheduledMessage(row)] }, users: [row.senderId] },
      },
    });
    return row.id;
  });
}

const alreadySent = () => badRequest("Scheduled message was already sent");

export interface EditRequest {
  type?: InputType;
  to?: number | number[];
  content?: string;
  topic?: string;
  scheduledDeliveryTimestamp?: number;
}

/**
 * PATCH /scheduled_messages/{id}: only the given fields change. A new type needs `to` (and a
 * topic for channels); a failed message needs a new delivery time, which makes it pending again.
 */
export async function doEditScheduledMessage(deps: SchedulerDeps, who: Identity, id: number, req: EditRequest): Promise<void> {
  const nothing = [req.type, req.to, req.content, req.topic, req.scheduledDeliveryTimestamp].every((v) => v === undefined);
  if (nothing) throw badRequest("Nothing to change");
  const newType = req.type === undefined ? undefined : recipientTypeOf(req.type);
  // The recipient first, then the topic, as Zulip checks them.
  if (newType !== undefined && req.to === undefined) throw badRequest("Recipient required when updating type of scheduled message.");
  if (newType === "stream" && req.topic === undefined) throw badRequest("Topic required when updating scheduled message type to channel.");
  const scheduledAt = req.scheduledDeliveryTimestamp === undefined ? undefined : deliveryTime(deps, req.scheduledDeliveryTimestamp);

  // What the edit makes of a stored message, and messaging's check of it when it needs one.
  const refuseIn = (row: ScheduledMessageRow) => {
    // Delivered meanwhile by the loop: the edit comes too late.
    if (row.delivered) throw alreadySent();
    if (row.failed && scheduledAt === undefined) throw badRequest("Scheduled delivery time must be in the future.");
  };
  const planFor = (row: ScheduledMessageRow) => {
    const recipientType = newType ?? row.recipientType;
    const addressee: Addressee =
      req.to !== undefined ? parseTo(recipientType, req.to, who.userId) : { recipientType, streamId: row.streamId, userIds: row.userIds };
    return { addressee, topic: recipientType === "stream" ? req.topic ?? row.topic : null, content: req.content ?? row.content };
  };
  const checkFor = async (row: ScheduledMessageRow) => {
    const plan = planFor(row);
    // A topic alone does not change a direct message: nothing to check then.
    const changesMessage =
      req.type !== undefined || req.to !== undefined || req.content !== undefined || (req.topic !== undefined && plan.addressee.recipientType === "stream");
    const checked = changesMessage
      ? await checkWithMessaging(deps, who, plan.addressee, plan.topic, plan.content)
      : { content: row.content, topic: row.topic, renderedContent: row.renderedContent };
    return { plan, checked };
  };

  // Read and check without holding the row's lock across messaging's check; then lock and
  // apply. Another edit (or the delivery loop's failure) that changed the message meanwhile
  // would be overwritten with what was read before it: then the edit is checked again against
  // what is there now, this time under the lock.
  const current = await withTx(deps.pool, (tx) => accessScheduledMessage(tx, who, id));
  refuseIn(current);
  let { plan, checked } = await checkFor(current);

  // A delivery that messaging accepted but that died before recording it is recorded first (it
  // would be repeated with the same key, and messaging would answer the message as it was sent):
  // the edit then comes too late, as for a delivery the loop recorded.
  const sent = await withTx(deps.pool, async (tx) => {
    const locked = await accessScheduledMessage(tx, who, id);
    if (await settleDelivery(deps, tx, locked)) return true;
    refuseIn(locked);
    if (!sameMessage(locked, current)) ({ plan, checked } = await checkFor(locked));
    const recipientType = plan.addressee.recipientType;
    const row = await updateScheduledMessage(tx, who.realmId, id, {
      ...plan.addressee,
      topic: recipientType === "stream" ? checked.topic : null,
      content: checked.content,
      renderedContent: checked.renderedContent,
      scheduledAt: scheduledAt ?? locked.scheduledAt,
      failed: scheduledAt === undefined ? locked.failed : false,
    });
    await notifyUpdated(tx, row);
    return false;
  });
  if (sent) throw alreadySent();
}

/** Whether what an edit builds on (addressee, topic, content) is unchanged between two reads. */
function sameMessage(a: ScheduledMessageRow, b: ScheduledMessageRow): boolean {
  return (
    a.recipientType === b.recipientType &&
    a.streamId === b.streamId &&
    JSON.stringify(a.userIds) === JSON.stringify(b.userIds) &&
    a.topic === b.topic &&
    a.content === b.content &&
    a.renderedContent === b.renderedContent
  );
}

/**
 * DELETE /scheduled_messages/{id}. A delivered message goes too, as in Zulip, but without a second
 * `remove`: its delivery told the sender's clients already. A deletion that waited for a delivery
 * in progress (the row's lock) is such a case. (One whose delivery messaging accepted but the
 * scheduler never recorded sends the only `remove` here, and answers the same: nothing to settle.)
 */
export async function doDeleteScheduledMessage(deps: SchedulerDeps, who: Identity, id: number): Promise<void> {
  await withTx(deps.pool, async (tx) => {
    const row = await accessScheduledMessage(tx, who, id);
    await deleteScheduledMessage(tx, row.realmId, row.id);
    if (row.delivered) return;
    await emitEvent(tx, {
      type: "scheduler.scheduled_message.deleted",
      realmId: row.realmId,
      payload: {
        sender_id: row.senderId,
        scheduled_message_id: row.id,
        client: { event: { type: "scheduled_messages", op: "remove", scheduled_message_id: row.id }, users: [row.senderId] },
      },
    });
  });
}

