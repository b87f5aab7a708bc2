import { MessagingTopicMessagesDeleted } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { checkAdministrator } from "../lib/permissions";
import { accessStreamById, viewerOf } from "../queries/streams";
import { deleteMessages, selectReceivers } from "../store/retention";
import { lockTopicBatch } from "../store/topics";
import { deletionAudience, refreshFirstMessageId } from "./message-delete";

/** Zulip's batch (RETENTION_STREAM_MESSAGE_BATCH_SIZE) and the time after which it stops and answers `complete: false`. */
const BATCH = 100;
const TIME_BUDGET_MS = 50_000;

/**
 * POST /streams/{stream_id}/delete_topic (Zulip's delete_in_topic): organization administrators
 * only, in a channel they can access (a private one only as a subscriber), and with protected
 * history only the messages they received. Newest first, one transaction per batch, each with a
 * delete_message event (`message_ids`) to those who had the messages or read the channel's history.
 */
export async function doDeleteTopic(deps: AppDeps, who: Identity, streamId: number, topic: string): Promise<boolean> {
  checkAdministrator(who.role);
  const { stream, sub } = await accessStreamById(deps.pool, viewerOf(who), streamId);
  if (stream.inviteOnly && !sub?.active) throw badRequest("Invalid channel ID");
  const onlyOf = stream.historyPublicToSubscribers ? null : who.userId;
  const started = performance.now();
  for (;;) {
    if (performance.now() - started >= TIME_BUDGET_MS) return false;
    const deleted = await withTx(deps.pool, async (tx) => {
      const rows = await lockTopicBatch(tx, who.realmId, stream.id, topic, BATCH, onlyOf);
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => r.id);
      const receivers = await selectReceivers(tx, who.realmId, ids);
      await deleteMessages(tx, who.realmId, ids);
      await refreshFirstMessageId(tx, deps, who.realmId, stream.id);
      await deps.hooks.onMessagesDeleted?.(tx, who.realmId, ids);
      const holders = [...new Set(ids.flatMap((id) => receivers.get(id) ?? []))].sort((a, b) => a - b);
      const users = await deletionAudience(tx, who.realmId, stream.id, holders);
      const event = { type: "delete_message", message_type: "stream", message_ids: ids, stream_id: stream.id, topic: rows[0].topic };
      await emitEvent(tx, {
        type: "messaging.topic.messages_deleted",
        realmId: who.realmId,
        payload: MessagingTopicMessagesDeleted.parse({ message_ids: ids, client: { event, users } }),
      });
      return rows.length;
    });
    if (deleted < BATCH) return true;
  }
}
