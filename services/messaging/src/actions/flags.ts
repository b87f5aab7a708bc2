import { EDITABLE_MESSAGE_FLAGS, MESSAGE_FLAGS, MessagingMessageFlagsUpdated, type MessageFlag, type NarrowTerm } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { FLAG_BITS } from "../lib/flags";
import { isMutedForUser } from "../lib/visibility-policy";
import { accessMessages } from "../queries/message-access";
import { selectMessageRange } from "../queries/messages";
import { viewerOf } from "../queries/streams";
import { lockMessagesAgainstDeletion, type MessageRow } from "../store/messages";
import { selectDirectParticipants } from "../store/recipients";
import { selectUserSubscriptions } from "../store/subscriptions";
import { selectUserTopics } from "../store/user-topics";
import { insertOwnRowsIfAbsent, selectUserFlagsForUpdate, updateFlagBit } from "../store/usermessages";

function checkFlagChange(op: string, flag: string): void {
  if (!(MESSAGE_FLAGS as readonly string[]).includes(flag)) throw badRequest(`Invalid flag: '${flag}'`);
  if (!EDITABLE_MESSAGE_FLAGS.includes(flag as MessageFlag)) throw badRequest(`Flag not editable: '${flag}'`);
  if (op !== "add" && op !== "remove") throw badRequest(`Invalid message flag operation: '${op}'`);
}

/** POST /messages/flags: returns the ids whose flag actually changed. */
export async function doUpdateMessageFlags(deps: AppDeps, who: Identity, messageIds: number[], op: string, flag: string): Promise<number[]> {
  checkFlagChange(op, flag);
  const add = op === "add";
  const bit = FLAG_BITS[flag as "read" | "starred" | "collapsed"];
  const viewer = viewerOf(who);
  let ids = [...new Set(messageIds)];
  const subs = new Map((await selectUserSubscriptions(deps.pool, who.realmId, who.userId)).map((s) => [s.streamId, s]));

  return withTx(deps.pool, async (tx) => {
    const owned = await selectUserFlagsForUpdate(tx, who.realmId, who.userId, ids);
    const missing = ids.filter((id) => !owned.has(id));
    const accessed = await accessMessages(tx, viewer, ids);
    if (missing.some((id) => !accessed.has(id))) throw badRequest("Invalid message(s)");
    if (flag === "read" && !add) {
      // Unread channel messages must be in channels the user is subscribed to (Zulip's invariant).
      ids = ids.filter((id) => {
        const m = accessed.get(id)!.row;
        return m.streamId === null || Boolean(subs.get(m.streamId)?.active);
      });
    }
    const changed = await updateFlagBit(tx, who.realmId, who.userId, ids.filter((id) => owned.has(id)), bit, add);
    // Any change to a message read through channel history gives the user their own (historical)
    // row, as Zulip's create_historical_user_messages does, even one that changes nothing shown:
    // the message is then in the user's own history (their combined feed). Marking one unread
    // thus works in a channel one joined after the message was sent.
    const kept = new Set(ids);
    changed.push(...(await insertHistorical(tx, who.realmId, who.userId, missing.filter((id) => kept.has(id)), bit, add)));
    changed.sort((a, b) => a - b);
    if (changed.length > 0) {
      const details = flag === "read" && !add ? await unreadDetails(tx, who, changed.map((id) => accessed.get(id)!.row), subs, owned) : undefined;
      await notifyMessageFlagsUpdated(tx, who, { op, flag, messages: changed, all: false, details });
    }
    return changed;
  });
}

export interface FlagsChange {
  op: string;
  flag: string;
  /** Ascending. */
  messages: number[];
  /** Every message of the user (mark all as read): `messages` is then empty, as in Zulip. */
  all: boolean;
  /** Zulip's message_details, for messages marked unread. */
  details?: Record<string, Record<string, unknown>>;
}

/**
 * The update_message_flags event, to the user's own queues only: every change of a user's flags
 * (POST /messages/flags and the mark-as-read endpoints) announces itself here.
 */
export async function notifyMessageFlagsUpdated(tx: Queryable, who: Identity, change: FlagsChange): Promise<void> {
  const { op, flag, messages, all, details } = change;
  // `operation` is the older name of `op`, still sent by Zulip.
  const event: Record<string, unknown> = { type: "update_message_flags", op, operation: op, flag, messages, all };
  if (details) event.message_details = details;
  await emitEvent(tx, {
    type: "messaging.message_flags.updated",
    realmId: who.realmId,
    payload: MessagingMessageFlagsUpdated.parse({ user_id: who.userId, client: { event, users: [who.userId] } }),
  });
}

/** Zulip's bound on one flags/narrow request, so that its transaction stays small. */
const MAX_MESSAGES_PER_UPDATE = 5000;

export interface NarrowFlagsRequest {
  anchor: string;
  includeAnchor: boolean;
  numBefore: number;
  numAfter: number;
  narrow: NarrowTerm[];
  op: string;
  flag: string;
}

export interface NarrowFlagsResult {
  processed_count: number;
  updated_count: number;
  first_processed_id: number | null;
  last_processed_id: number | null;
  found_oldest: boolean;
  found_newest: boolean;
}

/**
 * POST /messages/flags/narrow: the messages GET /messages would return for the same anchor,
 * counts and narrow get the flag change of POST /messages/flags. Counts past the bound are cut
 * down (each side keeps at least half), as Zulip does, instead of refused.
 */
export async function doUpdateMessageFlagsForNarrow(deps: AppDeps, who: Identity, req: NarrowFlagsRequest): Promise<NarrowFlagsResult> {
  checkFlagChange(req.op, req.flag);
  const half = MAX_MESSAGES_PER_UPDATE / 2;
  const numBefore = Math.min(req.numBefore, Math.max(MAX_MESSAGES_PER_UPDATE - req.numAfter, half));
  const numAfter = Math.min(req.numAfter, Math.max(MAX_MESSAGES_PER_UPDATE - numBefore, half));
  const found = await selectMessageRange(deps, who, {
    anchor: req.anchor,
    includeAnchor: req.includeAnchor,
    numBefore,
    numAfter,
    narrow: req.narrow,
    useFirstUnreadAnchor: false,
  });
  const ids = found.rows.map((m) => m.id);
  const changed = ids.length > 0 ? await doUpdateMessageFlags(deps, who, ids, req.op, req.flag) : [];
  return {
    processed_count: ids.length,
    updated_count: changed.length,
    first_processed_id: ids.length > 0 ? ids[0] : null,
    last_processed_id: ids.length > 0 ? ids[ids.length - 1] : null,
    found_oldest: found.foundOldest,
    found_newest: found.foundNewest,
  };
}

/** The flags a message read through channel history shows before the user has a row for it. */
const HISTORY_FLAGS = FLAG_BITS.read | FLAG_BITS.historical;

/**
 * The user's own rows for messages they read through channel history, with `bit` set (`add`) or
 * cleared; returns the ids whose shown flag this changed (a star added, or read removed: a
 * message one meets in history shows as read). The messages are locked against deletion first
 * (what a foreign key did): a deletion that comes now waits, then takes these rows with the
 * message; one that came first leaves nothing to write for. A concurrent request of the same
 * user may have written the row first: then the flag is changed on that row, if it differs.
 */
async function insertHistorical(tx: Queryable, realmId: number, userId: number, ids: number[], bit: number, add: boolean): Promise<number[]> {
  if (ids.length === 0) return [];
  const present = await lockMessagesAgainstDeletion(tx, realmId, ids);
  const wanted = ids.filter((id) => present.has(id));
  const inserted = await insertOwnRowsIfAbsent(tx, realmId, userId, wanted, add ? HISTORY_FLAGS | bit : HISTORY_FLAGS & ~bit);
  const raced = wanted.filter((id) => !inserted.includes(id));
  const shownChanged = add !== ((HISTORY_FLAGS & bit) !== 0);
  return [...(shownChanged ? inserted : []), ...(await updateFlagBit(tx, realmId, userId, raced, bit, add))];
}

/**
 * Zulip's `message_details` for messages marked unread (format_unread_message_details): where each
 * lives, whether it counts (`unmuted_stream_msg`: neither its channel nor its topic muted for the
 * user, as register's `count` judges it) and whether it is in `mentions` (a direct mention, or a
 * wildcard one outside muted conversations).
 */
async function unreadDetails(
  tx: Queryable,
  who: Identity,
  rows: MessageRow[],
  subs: Map<number, { isMuted: boolean }>,
  flags: Map<number, number>,
): Promise<Record<string, Record<string, unknown>>> {
  const participants = await selectDirectParticipants(tx, who.realmId, rows.filter((r) => r.streamId === null).map((r) => r.recipientId));
  const topics = rows.some((r) => r.streamId !== null) ? await selectUserTopics(tx, who.realmId, who.userId) : [];
  const policy = new Map(topics.map((t) => [`${t.streamId}:${t.topicName.toLowerCase()}`, t.visibilityPolicy]));
  const out: Record<string, Record<string, unknown>> = {};
  for (const r of rows) {
    const bits = flags.get(r.id) ?? 0;
    const direct = (bits & FLAG_BITS.mentioned) !== 0;
    const wildcard = (bits & (FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned)) !== 0;
    let detail: Record<string, unknown>;
    let muted = false;
    if (r.streamId !== null) {
      muted = isMutedForUser(Boolean(subs.get(r.streamId)?.isMuted), policy.get(`${r.streamId}:${r.topic.toLowerCase()}`) ?? 0);
      detail = { type: "stream", stream_id: r.streamId, topic: r.topic, unmuted_stream_msg: !muted };
    } else {
      detail = { type: "private", user_ids: (participants.get(r.recipientId) ?? []).filter((id) => id !== who.userId) };
    }
    if (direct || (wildcard && !muted)) detail.mentioned = true;
    out[String(r.id)] = detail;
  }
  return out;
}
