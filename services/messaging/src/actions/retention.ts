import { MessagingMessagesExpired } from "@chat/contracts";
import { emitEvent, withTx } from "@chat/platform";
import type { AppDeps } from "../deps";
import { deleteMessages, lockExpiredMessages, selectReceivers, type ExpiredRow } from "../store/retention";
import { deletionAudience, refreshFirstMessageId } from "./message-delete";

/**
 * Deletes one batch of one channel's (or, with `streamId` null, the realm's direct) messages
 * sent before `cutoff`, in one transaction: the rows, the uploads no remaining message links
 * (the deletion hook), and a `delete_message` event per conversation to the users who had the
 * messages (and the subscribers of a channel whose history they read). Returns how many were
 * deleted (0 when nothing is left).
 */
export async function doDeleteExpiredBatch(deps: AppDeps, realmId: number, streamId: number | null, cutoff: Date, limit: number): Promise<number> {
  return withTx(deps.pool, async (tx) => {
    const rows = await lockExpiredMessages(tx, realmId, streamId, cutoff, limit);
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    const receivers = await selectReceivers(tx, realmId, ids);
    await deleteMessages(tx, realmId, ids);
    if (streamId !== null) await refreshFirstMessageId(tx, deps, realmId, streamId);
    await deps.hooks.onMessagesDeleted?.(tx, realmId, ids);
    for (const group of conversations(rows)) {
      const messageIds = group.map((r) => r.id);
      const first = group[0];
      const holders = [...new Set(messageIds.flatMap((id) => receivers.get(id) ?? []))].sort((a, b) => a - b);
      const users = await deletionAudience(tx, realmId, first.streamId, holders);
      const event =
        first.streamId !== null
          ? { type: "delete_message", message_type: "stream", message_ids: messageIds, stream_id: first.streamId, topic: first.topic }
          : { type: "delete_message", message_type: "private", message_ids: messageIds };
      await emitEvent(tx, {
        type: "messaging.messages.expired",
        realmId,
        payload: MessagingMessagesExpired.parse({ message_ids: messageIds, client: { event, users } }),
      });
    }
    return rows.length;
  });
}

/** Zulip's deletion events name one conversation: a channel topic, or one direct conversation. */
function conversations(rows: ExpiredRow[]): ExpiredRow[][] {
  const groups = new Map<string, ExpiredRow[]>();
  for (const r of rows) {
    const key = r.streamId !== null ? `s:${r.streamId}:${r.topic}` : `d:${r.recipientId}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()];
}
