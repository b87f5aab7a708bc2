import { MessagingMessagesMovedAway, type EditHistoryEntry, type InternalRealm } from "@chat/contracts";
import { emitEvent, organizationUrl, type Identity, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { FLAG_BITS } from "../lib/flags";
import { topicNarrow } from "../lib/markdown";
import { newThreadNotice, oldThreadNotice, onlyResolvedPrefixChanged, resolveChange, resolveNotice, silentMention, topicLink, type PropagateMode } from "../lib/message-edit";
import { isGuestRole } from "../lib/permissions";
import { policyAfterMerge, VISIBILITY } from "../lib/visibility-policy";
import { accessMessages } from "../queries/message-access";
import { viewerOf, type Viewer } from "../queries/streams";
import { lockTopicMessages, moveMessageRows, recordMessageEdit, selectSenderAndReactorIds, selectTopicMessageIds } from "../store/messages";
import type { StreamRow } from "../store/streams";
import { selectSubscribersWithRoles } from "../store/subscriptions";
import { deleteUsersMessageRows, insertUsersMessageRows } from "../store/usermessages";
import { selectTopicPolicies } from "../store/user-topics";
import type { UserRow } from "../store/users";
import type { EditPlan, EditRequest } from "./message-edit";
import { sendAsNotificationBot } from "./notification-bot";
import { setVisibilityPolicy } from "./user-topics";

export interface MoveResult {
  /** Every message moved, the edited one included, ascending. */
  changedIds: number[];
  /** Users to whom the move was a deletion (they cannot read the new channel). */
  losingAccess: number[];
  origStream: StreamRow;
  origTopic: string;
  newStream: StreamRow;
  newTopic: string;
  /** Whether the destination topic had messages before the move. */
  targetTopicHadMessages: boolean;
}

/** A notification bot's message, sent once the edit committed. */
export interface Notice {
  streamId: number;
  topic: string;
  content: string;
  unreadOnlyFor?: Set<number>;
}

/**
 * Moves the edited message, and with change_later / change_all the topic's later or other
 * messages, to the new topic and/or channel (Zulip's update_messages_for_topic_edit). Between
 * channels only messages the user can read move, so that nobody gains access by moving; within
 * a channel the whole topic moves, to keep it together. The other messages' edit history
 * records the topic and channel change only.
 */
export async function moveMessages(tx: Queryable, who: Identity, plan: EditPlan, now: Date, entry: EditHistoryEntry): Promise<MoveResult> {
  const realmId = who.realmId;
  const { message } = plan;
  const origStream = plan.origStream!;
  const newStream = plan.newStream ?? origStream;
  const origTopic = message.topic;
  const newTopic = plan.topic ?? origTopic;
  const targetTopicHadMessages = (await selectTopicMessageIds(tx, realmId, newStream.id, newTopic)).length > 0;
  let others: number[] = [];
  if (plan.propagateMode !== "change_one") {
    const after = plan.propagateMode === "change_later" ? message.id : undefined;
    others = (await lockTopicMessages(tx, realmId, origStream.id, origTopic, after)).map((m) => m.id).filter((id) => id !== message.id);
    if (plan.newStream) {
      const readable = await accessMessages(tx, viewerOf(who), others);
      others = others.filter((id) => readable.has(id));
    }
  }
  const changedIds = [message.id, ...others].sort((a, b) => a - b);
  await moveMessageRows(tx, realmId, changedIds, { topic: newTopic, streamId: newStream.id, recipientId: newStream.recipientId });
  const { prev_content: _c, prev_rendered_content: _r, prev_rendered_content_version: _v, ...moveOnly } = entry;
  await recordMessageEdit(tx, realmId, others, now, moveOnly);
  const losingAccess = plan.newStream ? await moveReaders(tx, realmId, changedIds, origStream, plan.newStream, origTopic) : [];
  return { changedIds, losingAccess, origStream, origTopic, newStream, newTopic, targetTopicHadMessages };
}

/**
 * The readers' rows after a move between channels, by Zulip's rules: subscribers of the old
 * channel who are not subscribed to the new one lose their rows; those of them who cannot read
 * the new channel at all (it is private, or they are guests) lose access, and to them the
 * messages are deleted. When the new channel does not share its history with subscribers, its
 * subscribers who were not on the old one get rows, read. Returns who lost access.
 */
async function moveReaders(tx: Queryable, realmId: number, ids: number[], from: StreamRow, to: StreamRow, topic: string): Promise<number[]> {
  const oldSubs = await selectSubscribersWithRoles(tx, realmId, from.id);
  const newSubs = await selectSubscribersWithRoles(tx, realmId, to.id);
  const onNew = new Set(newSubs.map((s) => s.userId));
  const onOld = new Set(oldSubs.map((s) => s.userId));
  const leaving = oldSubs.filter((s) => !onNew.has(s.userId));
  const losing = leaving.filter((s) => isGuestRole(s.role) || to.inviteOnly);
  if (!to.historyPublicToSubscribers) {
    await insertUsersMessageRows(tx, realmId, newSubs.filter((s) => !onOld.has(s.userId)).map((s) => s.userId), ids, FLAG_BITS.read);
  }
  await deleteUsersMessageRows(tx, realmId, leaving.map((s) => s.userId), ids);
  const users = losing.filter((s) => s.isActive).map((s) => s.userId);
  if (users.length > 0) {
    const event = { type: "delete_message", message_type: "stream", message_ids: ids, stream_id: from.id, topic };
    await emitEvent(tx, {
      type: "messaging.messages.moved_away",
      realmId,
      payload: MessagingMessagesMovedAway.parse({ message_ids: ids, client: { event, users } }),
    });
  }
  return losing.map((s) => s.userId);
}

/**
 * Visibility policies follow a topic that moved whole (Zulip: change_all, or a move that left
 * none of the topic's messages the acting user can read): each user's policy on the old topic is
 * cleared and set on the new one. Into a topic that had messages, a user's two policies merge
 * (policyAfterMerge). Users the move took the messages from only lose theirs.
 */
export async function moveTopicPolicies(tx: Queryable, who: Identity, move: MoveResult, propagateMode: PropagateMode, now: Date): Promise<void> {
  const realmId = who.realmId;
  const { origStream, origTopic, newStream, newTopic } = move;
  // A rename that only changes letter case keeps the same topic, and its policies.
  if (origStream.id === newStream.id && origTopic.toLowerCase() === newTopic.toLowerCase()) return;
  if (!(await movedAllVisible(tx, who, move, propagateMode))) return;
  const losing = new Set(move.losingAccess);
  const before = new Map((await selectTopicPolicies(tx, realmId, origStream.id, origTopic)).map((p) => [p.userId, p.policy]));
  const target = new Map((await selectTopicPolicies(tx, realmId, newStream.id, newTopic)).map((p) => [p.userId, p.policy]));
  const users = [...new Set([...before.keys(), ...target.keys()])].sort((a, b) => a - b);
  for (const userId of users) {
    const moved = before.get(userId) ?? VISIBILITY.inherit;
    const into = target.get(userId) ?? VISIBILITY.inherit;
    if (moved !== VISIBILITY.inherit) await setVisibilityPolicy(tx, realmId, userId, origStream.id, origTopic, VISIBILITY.inherit, now);
    if (losing.has(userId)) continue;
    const next = move.targetTopicHadMessages ? policyAfterMerge(moved, into) : moved;
    if (next !== into) await setVisibilityPolicy(tx, realmId, userId, newStream.id, newTopic, next, now);
  }
}

/**
 * Whether the move took the whole topic as the acting user sees it: change_all, or nothing they
 * can read left behind (Zulip's moved_all_visible_messages, which reveals nothing else).
 */
export async function movedAllVisible(tx: Queryable, who: Identity, move: MoveResult, propagateMode: PropagateMode): Promise<boolean> {
  if (propagateMode === "change_all") return true;
  return !(await anyReadable(tx, viewerOf(who), await selectTopicMessageIds(tx, who.realmId, move.origStream.id, move.origTopic)));
}

async function anyReadable(tx: Queryable, viewer: Viewer, ids: number[]): Promise<boolean> {
  return ids.length > 0 && (await accessMessages(tx, viewer, ids)).size > 0;
}

/**
 * The notification bot's notices of a move, as Zulip words them: a resolved or unresolved topic
 * says so in the topic (unread only for those who sent or reacted to its messages); then, as
 * asked, the new topic says where the messages came from (unless the rename only toggled the
 * resolved prefix), and the old one where they went.
 */
export async function planNotices(
  deps: AppDeps,
  tx: Queryable,
  who: Identity,
  editor: UserRow,
  plan: EditPlan,
  req: Pick<EditRequest, "notifyNewThread" | "notifyOldThread">,
  move: MoveResult,
): Promise<Notice[]> {
  const user = silentMention(editor);
  const count = move.changedIds.length;
  const notices: Notice[] = [];
  const resolved = !plan.newStream && !plan.content ? resolveChange(move.origTopic, move.newTopic) : null;
  if (resolved) {
    // Those who wrote in the topic or reacted to its messages (Zulip's affected participants).
    const participants = new Set(await selectSenderAndReactorIds(tx, who.realmId, move.changedIds));
    notices.push({ streamId: move.origStream.id, topic: move.newTopic, content: resolveNotice(resolved, user), unreadOnlyFor: participants });
  }
  // Whether the whole topic moved, judged by what the user can read, so that neither notice
  // reveals anything else.
  const viewer = viewerOf(who);
  const movedAll = req.notifyNewThread || req.notifyOldThread ? await movedAllVisible(tx, who, move, plan.propagateMode) : false;
  // A rename that only adds or drops the resolved prefix is announced by the notice above (or,
  // with a content edit, not at all); a rename beyond it is a move like any other.
  if (req.notifyNewThread && (plan.newStream || !onlyResolvedPrefixChanged(move.origTopic, move.newTopic))) {
    const preexisting = await anyReadable(tx, viewer, await selectTopicMessageIds(tx, who.realmId, move.newStream.id, move.newTopic, move.changedIds));
    const { string_id: stringId } = await deps.accounts.getRealm(who.realmId);
    const link = `${organizationUrl(deps.config, stringId)}/${topicNarrow(move.newStream, move.newTopic)}/near/${plan.message.id}`;
    const from = topicLink(move.origStream.name, move.origTopic);
    notices.push({ streamId: move.newStream.id, topic: move.newTopic, content: newThreadNotice(count, movedAll && !preexisting, from, user, link) });
  }
  if (req.notifyOldThread) {
    const to = topicLink(move.newStream.name, move.newTopic);
    notices.push({ streamId: move.origStream.id, topic: move.origTopic, content: oldThreadNotice(count, movedAll, to, user) });
  }
  return notices;
}

/** Sends the notices as the organization's notification bot; a failure is logged, the edit stands (as in Zulip). */
export async function sendNotices(deps: AppDeps, realm: InternalRealm, notices: Notice[]): Promise<void> {
  await sendAsNotificationBot(deps, realm, notices, "a moved-messages notice");
}
