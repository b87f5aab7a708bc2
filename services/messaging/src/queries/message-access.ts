import type { Queryable } from "@chat/platform";
import { selectMessagesByIds, type MessageRow } from "../store/messages";
import { selectStreamsByIds } from "../store/streams";
import { selectUserSubscriptions } from "../store/subscriptions";
import { selectUserFlags } from "../store/usermessages";
import { canAccessHistory, type Viewer } from "./streams";

export interface AccessedMessage {
  row: MessageRow;
  /** The viewer's flag bits; null when they read it through channel history (no row of their own). */
  flags: number | null;
}

/**
 * Messages the viewer may read: those they received, plus channel messages whose history they
 * can access. Others (another organization's, a private channel's) are simply absent. This is
 * the reach of the viewer's own rows (flags, fetches by id list); a request that acts on one
 * message by its id uses accessMessagesById.
 */
export async function accessMessages(db: Queryable, viewer: Viewer, ids: number[]): Promise<Map<number, AccessedMessage>> {
  return access(db, viewer, ids, false);
}

/**
 * Messages the viewer may reach by id (Zulip's access_message / has_message_access, feature
 * level 267): a direct message they received; a channel message whose history they can access,
 * or one they received in a channel they are still subscribed to. A copy of their own is not
 * enough in a channel they left (or were removed from) and cannot otherwise read, nor in an
 * archived channel (Zulip 9 makes it private and ends every subscription). GET /messages/{id},
 * its history and read receipts, reactions, submessages, edits and deletion.
 */
export async function accessMessagesById(db: Queryable, viewer: Viewer, ids: number[]): Promise<Map<number, AccessedMessage>> {
  return access(db, viewer, ids, true);
}

async function access(db: Queryable, viewer: Viewer, ids: number[], bySubscription: boolean): Promise<Map<number, AccessedMessage>> {
  const rows = await selectMessagesByIds(db, viewer.realmId, [...new Set(ids)]);
  const flags = await selectUserFlags(db, viewer.realmId, viewer.userId, rows.map((r) => r.id));
  const out = new Map<number, AccessedMessage>();
  // Channel messages whose channel decides: all of them by id, else those without the viewer's row.
  const judged = rows.filter((r) => r.streamId !== null && (bySubscription || !flags.has(r.id)));
  const streams = new Map((await selectStreamsByIds(db, viewer.realmId, [...new Set(judged.map((r) => r.streamId!))])).map((s) => [s.id, s]));
  const subs = judged.length > 0 ? new Map((await selectUserSubscriptions(db, viewer.realmId, viewer.userId)).map((s) => [s.streamId, s])) : new Map();
  for (const r of rows) {
    const own = flags.get(r.id);
    if (r.streamId === null || (!bySubscription && own !== undefined)) {
      if (own !== undefined) out.set(r.id, { row: r, flags: own });
      continue;
    }
    const stream = streams.get(r.streamId);
    if (!stream || stream.deactivated) continue;
    const sub = subs.get(stream.id);
    if ((own !== undefined && sub?.active) || canAccessHistory(viewer, stream, sub)) out.set(r.id, { row: r, flags: own ?? null });
  }
  return out;
}
