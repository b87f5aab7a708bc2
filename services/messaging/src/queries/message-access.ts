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
 * can access. Others (another organization's, a private channel's) are simply absent.
 */
export async function accessMessages(db: Queryable, viewer: Viewer, ids: number[]): Promise<Map<number, AccessedMessage>> {
  const rows = await selectMessagesByIds(db, viewer.realmId, [...new Set(ids)]);
  const flags = await selectUserFlags(db, viewer.realmId, viewer.userId, rows.map((r) => r.id));
  const out = new Map<number, AccessedMessage>();
  const needHistory = rows.filter((r) => !flags.has(r.id) && r.streamId !== null);
  const streams = new Map((await selectStreamsByIds(db, viewer.realmId, [...new Set(needHistory.map((r) => r.streamId!))])).map((s) => [s.id, s]));
  const subs = needHistory.length > 0 ? new Map((await selectUserSubscriptions(db, viewer.realmId, viewer.userId)).map((s) => [s.streamId, s])) : new Map();
  for (const r of rows) {
    if (flags.has(r.id)) out.set(r.id, { row: r, flags: flags.get(r.id)! });
    else if (r.streamId !== null) {
      const stream = streams.get(r.streamId);
      if (stream && canAccessHistory(viewer, stream, subs.get(stream.id))) out.set(r.id, { row: r, flags: null });
    }
  }
  return out;
}
