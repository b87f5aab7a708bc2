import { MessagingMessageDeleted } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { isAdminRole } from "../lib/permissions";
import { accessMessages } from "../queries/message-access";
import { viewerOf } from "../queries/streams";
import { deleteMessageRow } from "../store/messages";
import { recomputeFirstMessageId } from "../store/streams";
import { selectMessageUserIds } from "../store/usermessages";

/** DELETE /messages/{id}: organization administrators only (spec 4.20); gone for good. */
export async function doDeleteMessage(deps: AppDeps, who: Identity, messageId: number): Promise<void> {
  const accessed = await accessMessages(deps.pool, viewerOf(who), [messageId]);
  const message = accessed.get(messageId)?.row;
  if (!message) throw badRequest("Invalid message(s)");
  if (!isAdminRole(who.role)) throw badRequest("You don't have permission to delete this message");
  await withTx(deps.pool, async (tx) => {
    const users = await selectMessageUserIds(tx, who.realmId, messageId);
    await deleteMessageRow(tx, who.realmId, messageId);
    if (message.streamId !== null) await recomputeFirstMessageId(tx, who.realmId, message.streamId);
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
  });
}
