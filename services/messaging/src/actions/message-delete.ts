import { MessagingMessageDeleted, MessagingStreamUpdated } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { isAdminRole } from "../lib/permissions";
import { streamWatchers } from "../queries/audiences";
import { accessMessagesById } from "../queries/message-access";
import { viewerOf } from "../queries/streams";
import { deleteMessageRow } from "../store/messages";
import { recomputeFirstMessageId, selectStreamById } from "../store/streams";
import { selectSubscriberIds } from "../store/subscriptions";
import { selectMessageUserIds } from "../store/usermessages";

/** DELETE /messages/{id}: organization administrators only (spec 4.20); gone for good. */
export async function doDeleteMessage(deps: AppDeps, who: Identity, messageId: number): Promise<void> {
  const accessed = await accessMessagesById(deps.pool, viewerOf(who), [messageId]);
  const message = accessed.get(messageId)?.row;
  if (!message) throw badRequest("Invalid message(s)");
  if (!isAdminRole(who.role)) throw badRequest("You don't have permission to delete this message");
  await withTx(deps.pool, async (tx) => {
    const holders = await selectMessageUserIds(tx, who.realmId, messageId);
    // Concurrent deletes: the one that waited finds nothing left, and fails as if it came after.
    if (!(await deleteMessageRow(tx, who.realmId, messageId))) throw badRequest("Invalid message(s)");
    const users = await deletionAudience(tx, who.realmId, message.streamId, holders);
    await deps.hooks.onMessagesDeleted?.(tx, who.realmId, [messageId]);
    const event: Record<string, unknown> =
      message.streamId !== null
        ? { type: "delete_message", message_type: "stream", message_id: messageId, stream_id: message.streamId, topic: message.topic }
        : { type: "delete_message", message_type: "private", message_id: messageId };
    await emitEvent(tx, {
      type: "messaging.message.deleted",
      realmId: who.realmId,
      payload: MessagingMessageDeleted.parse({ message_id: messageId, client: { event, users } }),
    });
    if (message.streamId !== null) await refreshFirstMessageId(tx, deps, who.realmId, message.streamId);
  });
}

/**
 * Who hears of a deletion: those who had the messages (their usermessage rows), and for a
 * channel whose history subscribers can read, its subscribers too: one who joined later reads
 * the messages through that history, without a row of their own. Protected history stays with
 * the rows' holders (a later subscriber never saw those messages, nor may learn their topic).
 */
export async function deletionAudience(tx: Queryable, realmId: number, streamId: number | null, holders: number[]): Promise<number[]> {
  const stream = streamId === null ? null : await selectStreamById(tx, realmId, streamId);
  if (!stream || (stream.inviteOnly && !stream.historyPublicToSubscribers)) return holders;
  const subscribers = (await selectSubscriberIds(tx, realmId, [stream.id])).get(stream.id) ?? [];
  return [...new Set([...holders, ...subscribers])].sort((a, b) => a - b);
}

/**
 * After deletions from a channel: its first_message_id follows, and when it changed everyone who
 * can see the channel gets a stream update (Zulip sends it from feature level 256).
 */
export async function refreshFirstMessageId(tx: Queryable, deps: AppDeps, realmId: number, streamId: number): Promise<void> {
  const { changed, firstMessageId } = await recomputeFirstMessageId(tx, realmId, streamId);
  if (changed) await notifyFirstMessageId(tx, deps, realmId, streamId, firstMessageId);
}

/** A channel's first_message_id changed (its first message sent, or its oldest deleted or moved): a stream update to everyone who can see it. */
export async function notifyFirstMessageId(tx: Queryable, deps: AppDeps, realmId: number, streamId: number, firstMessageId: number | null): Promise<void> {
  const stream = await selectStreamById(tx, realmId, streamId);
  if (!stream) return;
  const subscribers = (await selectSubscriberIds(tx, realmId, [streamId])).get(streamId) ?? [];
  const event = { type: "stream", op: "update", stream_id: streamId, name: stream.name, property: "first_message_id", value: firstMessageId };
  await emitEvent(tx, {
    type: "messaging.stream.updated",
    realmId,
    payload: MessagingStreamUpdated.parse({ stream_id: streamId, client: { event, users: await streamWatchers(deps, stream, subscribers) } }),
  });
}
