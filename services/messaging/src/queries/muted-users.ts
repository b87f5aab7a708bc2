import type { Queryable } from "@chat/platform";
import { FLAG_BITS } from "../lib/flags";
import { selectMutingUsers } from "../store/muted-users";

/**
 * Sets `read` for the recipients who muted the sender (messaging's replica of accounts' mute
 * lists), as Zulip's do_send_messages does (mark_as_read_user_ids): their copy never counts as
 * unread and notifies nobody.
 */
export async function markReadForMuters(
  db: Queryable,
  realmId: number,
  senderId: number,
  entries: Array<{ userId: number; flags: number }>,
  /** Who among the recipients muted the sender, when already read (the send's context). */
  known?: Set<number>,
): Promise<void> {
  const muters = known ?? (await selectMutingUsers(db, realmId, senderId, entries.map((e) => e.userId)));
  for (const e of entries) if (muters.has(e.userId)) e.flags |= FLAG_BITS.read;
}
