import { MessagingMessageUpdated, type EditHistoryEntry, type InternalRealm } from "@chat/contracts";
import { ApiError, badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { FLAG_BITS, flagsToList } from "../lib/flags";
import { compileLinkifiers, topicLinks } from "../lib/linkifiers";
import { renderMessageContent, type RenderResult } from "../lib/markdown";
import {
  checkEditPayload,
  flagsAfterContentEdit,
  moveTimeLimit,
  moveTimeLimitMessage,
  passesMovePolicy,
  pastTimeLimit,
  RENDERED_CONTENT_VERSION,
  type EditedMentions,
  type PropagateMode,
} from "../lib/message-edit";
import { normalizeBody } from "../lib/normalize";
import { isGuestRole, isModeratorRole, passesWildcardPolicy, postPolicyRefusal, WILDCARD_MENTION_THRESHOLD } from "../lib/permissions";
import { markAlertWords } from "../queries/alert-words";
import { accessMessages, accessMessagesById } from "../queries/message-access";
import { buildMentionDirectory } from "../queries/mentions";
import { canAccessHistory, findStream, viewerOf } from "../queries/streams";
import { getUser } from "../queries/users";
import {
  lockMessageForEdit,
  lockTopicMessages,
  recordMessageEdit,
  selectMessagesByIds,
  selectTopicParticipants,
  updateMessageContent,
  type MessageRow,
} from "../store/messages";
import { selectStreamById, type StreamRow } from "../store/streams";
import { firstSubmessage } from "../store/submessages";
import { selectSubscriberIds } from "../store/subscriptions";
import { selectMessageRowsForUpdate, updateMessageFlags } from "../store/usermessages";
import type { UserRow } from "../store/users";
import { refreshFirstMessageId } from "./message-delete";
import { moveMessages, moveTopicPolicies, planNotices, sendNotices, type Notice } from "./message-move";

export interface EditRequest {
  messageId: number;
  content?: string;
  topic?: string;
  streamId?: number;
  propagateMode: PropagateMode;
  notifyOldThread: boolean;
  notifyNewThread: boolean;
}

/** What an edit changes, once every check passed. */
export interface EditPlan {
  message: MessageRow;
  /** The message's channel (null for a direct message). */
  origStream: StreamRow | null;
  content?: { text: string; rendered: RenderResult; groupMentioned: Set<number> };
  /** The new topic, when it changes. */
  topic?: string;
  /** The channel the messages move to, when it changes. */
  newStream?: StreamRow;
  propagateMode: PropagateMode;
}

const unix = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * PATCH /messages/{id} (Zulip's check_update_message and do_update_message): checks, then in one
 * transaction the content edit, the move of the message (and the later ones or the whole topic),
 * the readers' rows and flags, and the events; the notification bot's notices follow the commit.
 */
export async function doUpdateMessage(deps: AppDeps, who: Identity, req: EditRequest): Promise<void> {
  const { realm, notices } = await withTx(deps.pool, async (tx) => {
    // Locked before it is read, so that concurrent edits of one message apply one after the other;
    // a topic-wide move locks the topic's messages first, in id order, as every other such move
    // does (locking the edited one first could deadlock two moves of one topic).
    if (req.propagateMode !== "change_one") {
      const peek = (await selectMessagesByIds(tx, who.realmId, [req.messageId]))[0];
      if (peek?.streamId != null) await lockTopicMessages(tx, who.realmId, peek.streamId, peek.topic);
    }
    if (!(await lockMessageForEdit(tx, who.realmId, req.messageId))) throw badRequest("Invalid message(s)");
    const message = (await accessMessagesById(tx, viewerOf(who), [req.messageId])).get(req.messageId)?.row;
    if (!message) throw badRequest("Invalid message(s)");
    const realm = await deps.accounts.getRealm(who.realmId);
    const editor = await getUser(deps, who.realmId, who.userId);
    if (!editor) throw badRequest("Invalid message(s)");
    const now = deps.clock.now();
    const plan = await checkUpdateMessage(deps, tx, who, editor, realm, message, req, now);
    const notices = await applyEdit(deps, tx, who, editor, plan, req, now);
    return { realm, notices };
  });
  await sendNotices(deps, realm, notices);
}

async function checkUpdateMessage(
  deps: AppDeps,
  tx: Queryable,
  who: Identity,
  editor: UserRow,
  realm: InternalRealm,
  message: MessageRow,
  req: EditRequest,
  now: Date,
): Promise<EditPlan> {
  const settings = realm.settings;
  if (req.content !== undefined) checkCanEditContent(realm, message, who, now);
  // An unchanged topic or channel is no change (the topic compared after trimming, exactly).
  const trimmed = req.topic?.trim();
  const streamId = req.streamId === message.streamId ? undefined : req.streamId;
  const topic = checkEditPayload(message.streamId !== null, {
    content: req.content,
    topic: trimmed === message.topic ? undefined : trimmed,
    streamId,
    propagateMode: req.propagateMode,
    // Only a content edit asks whether the message is a widget (a poll, a todo list).
    isWidget: req.content !== undefined && (await firstSubmessage(tx, who.realmId, message.id)) !== null,
  });
  const waiting = settings.waiting_period_threshold;
  if (topic !== undefined) {
    if (!passesMovePolicy(settings.edit_topic_policy, editor, waiting, now)) throw badRequest("You don't have permission to edit this message");
    const limit = settings.move_messages_within_stream_limit_seconds;
    if (!isModeratorRole(who.role) && limit !== null && pastTimeLimit(message.dateSent, now, limit)) {
      throw badRequest("The time limit for editing this message's topic has passed.");
    }
  }
  const origStream = message.streamId === null ? null : await selectStreamById(tx, who.realmId, message.streamId);
  const content = req.content === undefined ? undefined : await renderEdit(deps, tx, who, editor, realm, message, origStream, req.content, now);
  let newStream: StreamRow | undefined;
  if (streamId !== undefined) {
    if (!passesMovePolicy(settings.move_messages_between_streams_policy, editor, waiting, now)) {
      throw badRequest("You don't have permission to move this message");
    }
    newStream = await accessTargetStream(tx, who, streamId);
    const refusal = postPolicyRefusal(newStream.streamPostPolicy, editor, waiting, now);
    if (refusal) throw badRequest(refusal);
    const limit = settings.move_messages_between_streams_limit_seconds;
    if (!isModeratorRole(who.role) && limit !== null && pastTimeLimit(message.dateSent, now, limit)) {
      throw badRequest("The time limit for editing this message's channel has passed");
    }
  }
  const wholeTopicLimit = moveTimeLimit(settings, topic !== undefined, newStream !== undefined);
  if (req.propagateMode === "change_all" && !isModeratorRole(who.role) && wholeTopicLimit !== null) {
    await checkWholeTopicTimeLimit(tx, who, message, origStream!, now, wholeTopicLimit);
  }
  return { message, origStream, content, topic, newStream, propagateMode: req.propagateMode };
}

/** Zulip's validate_user_can_edit_message: only the sender edits content, within the limit. */
function checkCanEditContent(realm: InternalRealm, message: MessageRow, who: Identity, now: Date): void {
  if (!realm.settings.allow_message_editing) throw badRequest("Your organization has turned off message editing");
  if (message.senderId !== who.userId) throw badRequest("You don't have permission to edit this message");
  const limit = realm.settings.message_content_edit_limit_seconds;
  if (limit !== null && pastTimeLimit(message.dateSent, now, limit)) throw badRequest("The time limit for editing this message has passed");
}

/** The new content, rendered as the sender's, with the mention checks a send makes. */
async function renderEdit(
  deps: AppDeps,
  tx: Queryable,
  who: Identity,
  editor: UserRow,
  realm: InternalRealm,
  message: MessageRow,
  stream: StreamRow | null,
  raw: string,
  now: Date,
): Promise<EditPlan["content"]> {
  // Emptying a message leaves "(deleted)", as in Zulip.
  const text = normalizeBody(raw.trimEnd() === "" ? "(deleted)" : raw);
  const dir = await buildMentionDirectory(deps, viewerOf(who), text);
  const rendered = renderMessageContent(text, dir);
  const allowed = () => passesWildcardPolicy(realm.settings.wildcard_mention_policy, editor, realm.settings.waiting_period_threshold, now);
  if (stream && rendered.streamWildcard) {
    const subscribers = (await selectSubscriberIds(tx, who.realmId, [stream.id])).get(stream.id) ?? [];
    if (subscribers.length > WILDCARD_MENTION_THRESHOLD && !allowed()) {
      throw new ApiError("STREAM_WILDCARD_MENTION_NOT_ALLOWED", "You do not have permission to use channel wildcard mentions in this channel.");
    }
  }
  if (stream && rendered.topicWildcard) {
    const participants = await selectTopicParticipants(tx, who.realmId, stream.id, message.topic);
    if (participants.length > WILDCARD_MENTION_THRESHOLD && !allowed()) {
      throw new ApiError("TOPIC_WILDCARD_MENTION_NOT_ALLOWED", "You do not have permission to use topic wildcard mentions in this topic.");
    }
  }
  const groupMentioned = new Set<number>();
  for (const groupId of rendered.mentionedGroupIds) {
    if (!(await deps.accounts.canMentionGroup(who.realmId, groupId, who.userId))) {
      const name = [...dir.groupsByName.values()].find((g) => g.id === groupId)?.name ?? "";
      throw badRequest(`You are not allowed to mention user group '${name}'.`);
    }
    for (const id of await deps.accounts.groupMembers(who.realmId, groupId)) groupMentioned.add(id);
  }
  return { text, rendered, groupMentioned };
}

/**
 * Zulip's access_stream_by_id (require_active) for a move's destination: an active channel,
 * web-public or (for non-guests) public, or one the user is subscribed to; administrators get no
 * exception here.
 */
async function accessTargetStream(tx: Queryable, who: Identity, streamId: number): Promise<StreamRow> {
  const found = await findStream(tx, viewerOf(who), streamId);
  const ok = found && !found.stream.deactivated && (found.stream.isWebPublic || (!found.stream.inviteOnly && !isGuestRole(who.role)) || found.sub?.active);
  if (!found || !ok) throw badRequest("Invalid channel ID");
  return found.stream;
}

/**
 * A whole-topic move by a user below moderator: every message of the topic (that the user can
 * read) must be within the time limit, or the answer says how many the user could move.
 */
async function checkWholeTopicTimeLimit(tx: Queryable, who: Identity, message: MessageRow, stream: StreamRow, now: Date, limit: number): Promise<void> {
  const viewer = viewerOf(who);
  let topic = await lockTopicMessages(tx, who.realmId, stream.id, message.topic);
  const sub = (await findStream(tx, viewer, stream.id))?.sub;
  if (!canAccessHistory(viewer, stream, sub)) {
    // Only what the user received counts, so that nothing is learned of the rest.
    const own = await accessMessages(tx, viewer, topic.map((m) => m.id));
    topic = topic.filter((m) => own.has(m.id));
  }
  const allowed = topic.filter((m) => !pastTimeLimit(m.dateSent, now, limit));
  if (allowed.length === topic.length) return;
  throw new ApiError("MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", moveTimeLimitMessage(allowed.length, topic.length), {
    extra: {
      first_message_id_allowed_to_move: allowed[0]?.id ?? null,
      total_messages_in_topic: topic.length,
      total_messages_allowed_to_move: allowed.length,
    },
  });
}

/** The writes and events of a checked edit; returns the notices to send after the commit. */
async function applyEdit(deps: AppDeps, tx: Queryable, who: Identity, editor: UserRow, plan: EditPlan, req: EditRequest, now: Date): Promise<Notice[]> {
  const { message, origStream, content, topic, newStream } = plan;
  const realmId = who.realmId;
  const entry: EditHistoryEntry = { user_id: who.userId, timestamp: unix(now) };
  const event: Record<string, unknown> = { type: "update_message", user_id: who.userId, edit_timestamp: unix(now), message_id: message.id, rendering_only: false };
  if (origStream) Object.assign(event, { stream_name: origStream.name, stream_id: origStream.id });
  let holders = await selectMessageRowsForUpdate(tx, realmId, message.id);
  if (content) {
    Object.assign(entry, { prev_content: message.content, prev_rendered_content: message.renderedContent, prev_rendered_content_version: RENDERED_CONTENT_VERSION });
    Object.assign(event, {
      orig_content: message.content,
      orig_rendered_content: message.renderedContent,
      content: content.text,
      rendered_content: content.rendered.html,
      prev_rendered_content_version: RENDERED_CONTENT_VERSION,
      is_me_message: content.text.startsWith("/me "),
    });
    holders = await updateReaderFlags(tx, realmId, message, origStream, topic ?? message.topic, content, holders);
    const { rendered } = content;
    await updateMessageContent(tx, realmId, message.id, {
      content: content.text,
      renderedContent: rendered.html,
      hasLink: rendered.hasLink,
      hasImage: rendered.hasImage,
      hasAttachment: rendered.hasAttachment,
    });
    await deps.hooks.onMessageEdited?.(tx, { ...message, content: content.text, renderedContent: rendered.html });
  }
  const moving = topic !== undefined || newStream !== undefined;
  if (moving) Object.assign(event, { propagate_mode: plan.propagateMode, orig_subject: message.topic });
  if (newStream) {
    Object.assign(entry, { prev_stream: origStream!.id, stream: newStream.id });
    event.new_stream_id = newStream.id;
  }
  if (topic !== undefined) {
    Object.assign(entry, { prev_topic: message.topic, topic });
    Object.assign(event, { subject: topic, topic_links: topicLinks(topic, compileLinkifiers(await deps.accounts.getLinkifiers(realmId))) });
  }
  await recordMessageEdit(tx, realmId, [message.id], now, entry);
  const move = moving ? await moveMessages(tx, who, plan, now, entry) : null;
  event.message_ids = move?.changedIds ?? [message.id];

  // Those who had the message hear of it with their flags, and (as Zulip does) the channel's
  // subscribers who read it through shared history; not those the move took it from.
  const losing = new Set(move?.losingAccess ?? []);
  const users = holders.filter((h) => !losing.has(h.userId)).map((h) => ({ id: h.userId, flags: flagsToList(h.flags) }));
  if (origStream?.historyPublicToSubscribers) {
    const had = new Set(holders.map((h) => h.userId));
    for (const id of (await selectSubscriberIds(tx, realmId, [origStream.id])).get(origStream.id) ?? []) {
      if (!had.has(id) && !losing.has(id)) users.push({ id, flags: ["read"] });
    }
  }
  await emitEvent(tx, {
    type: "messaging.message.updated",
    realmId,
    payload: MessagingMessageUpdated.parse({ message_id: message.id, message_ids: event.message_ids, edit: entry, client: { event, users } }),
  });
  if (!move) return [];
  if (move.newStream.id !== move.origStream.id) {
    // Both channels' oldest messages may have changed (stream updates, as Zulip 9 sends them).
    await refreshFirstMessageId(tx, deps, realmId, move.origStream.id);
    await refreshFirstMessageId(tx, deps, realmId, move.newStream.id);
  }
  await moveTopicPolicies(tx, who, move, plan.propagateMode, now);
  return planNotices(deps, tx, who, editor, plan, req, move);
}

/**
 * The readers' flags after a content edit (mentions, alert words, wildcards), written where they
 * changed; returns every reader's row with its new flags.
 */
async function updateReaderFlags(
  tx: Queryable,
  realmId: number,
  message: MessageRow,
  stream: StreamRow | null,
  topic: string,
  content: NonNullable<EditPlan["content"]>,
  holders: Array<{ userId: number; flags: number }>,
): Promise<Array<{ userId: number; flags: number }>> {
  const { rendered, groupMentioned, text } = content;
  const alerts = holders.map((h) => ({ userId: h.userId, flags: 0 }));
  await markAlertWords(tx, realmId, text, alerts);
  const participants =
    stream && rendered.topicWildcard ? new Set([...(await selectTopicParticipants(tx, realmId, stream.id, topic)), message.senderId]) : new Set<number>();
  const mentions: EditedMentions = {
    mentioned: new Set([...rendered.mentionedUserIds, ...groupMentioned]),
    alerted: new Set(alerts.filter((a) => a.flags & FLAG_BITS.has_alert_word).map((a) => a.userId)),
    streamWildcard: rendered.streamWildcard,
    topicWildcard: rendered.topicWildcard,
    topicParticipants: stream ? participants : "all",
  };
  const after = holders.map((h) => ({ userId: h.userId, flags: flagsAfterContentEdit(h.userId, h.flags, mentions) }));
  await updateMessageFlags(tx, realmId, message.id, after.filter((a, i) => a.flags !== holders[i].flags));
  return after;
}
