import { MessagingMessageFlagsUpdated } from "@chat/contracts";
import { emitEvent, type Queryable } from "@chat/platform";
import { markSendersMessagesRead, selectMutedUserIdsForUpdate, upsertMutedUsers } from "../store/muted-users";

/**
 * Stores a user's mute list from accounts (a newer version already stored wins). Users newly in
 * the list get their messages marked read for this user, as Zulip's do_mute_user does
 * (do_mark_muted_user_messages_as_read): one update_message_flags event to the user's own
 * queues, none when nothing was unread. Unmuting changes no message.
 */
export async function doReplicateMutedUsers(tx: Queryable, realmId: number, userId: number, mutedUserIds: number[], version: number): Promise<void> {
  const before = new Set(await selectMutedUserIdsForUpdate(tx, realmId, userId));
  if (!(await upsertMutedUsers(tx, realmId, userId, mutedUserIds, version))) return;
  const newlyMuted = mutedUserIds.filter((id) => !before.has(id));
  const changed = await markSendersMessagesRead(tx, realmId, userId, newlyMuted);
  if (changed.length === 0) return;
  const event = { type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: changed, all: false };
  await emitEvent(tx, {
    type: "messaging.message_flags.updated",
    realmId,
    payload: MessagingMessageFlagsUpdated.parse({ user_id: userId, client: { event, users: [userId] } }),
  });
}
