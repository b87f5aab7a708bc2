import { badRequest, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { selectMuteRelatedUserIds } from "../store/muted-users";
import { selectReaderIds } from "../store/usermessages-read";
import { accessMessagesById } from "./message-access";
import { viewerOf } from "./streams";
import { getUserSettings } from "./user-settings";
import { getUsersByIds } from "./users";

/**
 * GET /messages/{message_id}/read_receipts, by Zulip's read_receipts view: for a message the
 * viewer may read, in an organization that shows read receipts, the users who read it, leaving out
 * the sender (their own message is read from the start), deactivated users and users who turned
 * `send_read_receipts` off, and users the viewer muted or who muted the viewer (feature level
 * 143). Bots count, and so does the viewer. (Zulip also leaves out long-idle users; this server
 * has none.)
 */
export async function getReadReceipts(deps: AppDeps, who: Identity, messageId: number): Promise<number[]> {
  const found = (await accessMessagesById(deps.pool, viewerOf(who), [messageId])).get(messageId);
  if (!found) throw badRequest("Invalid message(s)");
  const realm = await deps.accounts.getRealm(who.realmId);
  if (realm.settings.enable_read_receipts !== true) throw badRequest("Read receipts are disabled in this organization.");
  const readers = await selectReaderIds(deps.pool, who.realmId, messageId, found.row.senderId);
  if (readers.length === 0) return [];
  const users = await getUsersByIds(deps, who.realmId, readers);
  const settings = await getUserSettings(deps, who.realmId, readers);
  const muting = await selectMuteRelatedUserIds(deps.pool, who.realmId, who.userId);
  return readers.filter((id) => users.get(id)?.isActive === true && settings.get(id)?.sendReadReceipts === true && !muting.has(id));
}
