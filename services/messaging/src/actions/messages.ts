import { INACCESSIBLE_USER_AVATAR_PATH, INACCESSIBLE_USER_NAME, inaccessibleUserEmail, MessagingMessageSenderHidden, MessagingMessageSent } from "@chat/contracts";
import { ApiError, badRequest, emitEvent, missingParam, newEnvelope, outboxPublished, streamDoesNotExist, withTx, type Identity, type Queryable } from "@chat/platform";
import type { InternalRealm } from "@chat/contracts";
import type { AppDeps } from "../deps";
import { extractPrivateRecipients, extractStreamIndicator, messageKind } from "../lib/addressee";
import { FLAG_BITS, flagsToList } from "../lib/flags";
import { emailNoticesOf } from "../lib/missed-message-email";
import { messageObject, senderAvatarUrl } from "../lib/format";
import { topicLinks, type TopicLink } from "../lib/linkifiers";
import { renderMessageContent, type MentionDirectory, type RenderResult } from "../lib/markdown";
import { normalizeBody, normalizeTopic } from "../lib/normalize";
import { isGuestRole, passesWildcardPolicy, postPolicyRefusal, WILDCARD_MENTION_THRESHOLD } from "../lib/permissions";
import { buildMentionDirectory } from "../queries/mentions";
import { markAlertWords } from "../queries/alert-words";
import { markReadForMuters } from "../queries/muted-users";
import { canSeeStream, findStream, viewerOf, type AccessedStream } from "../queries/streams";
import { getUser, getUsersByEmails, getUsersByIds } from "../queries/users";
import { getUserSettings } from "../queries/user-settings";
import { checkCanAccessRecipients, guestsNotAccessingSender } from "../queries/user-access";
import type { UserSettingsView } from "../lib/user-settings";
import { followsWhenMentioned, policyAfterSend, VISIBILITY } from "../lib/visibility-policy";
import { insertSendKey, lockSendKey, selectSendKey } from "../store/idempotency";
import { notifyFirstMessageId } from "./message-delete";
import { widgetOf, type WidgetData } from "../lib/widgets";
import {
  insertMessageWithEvent,
  insertSentMessage,
  selectTopicParticipants,
  type EmailNotice,
  type MessageRow,
  type NewMessage,
  type StoredSend,
} from "../store/messages";
import { selectDirectSendContext, selectStreamSendContext, type DirectSendContext, type StreamSendContext } from "../store/send-context";
import type { StoredUserSettings } from "../store/user-settings";
import { upsertDirectRecipient } from "../store/recipients";
import { selectStreamSubscriptions } from "../store/subscriptions";
import { insertSubmessage, type SubmessageRow } from "../store/submessages";
import { insertDeliveries } from "../store/outgoing-webhooks";
import { wakeOutgoingWebhooks } from "../lib/outgoing-webhook-signal";
import type { UserRow } from "../store/users";
import { setVisibilityPolicy } from "./user-topics";
import { accessBeforeInTx, notifyAccessChangedInTx } from "./user-access";

export interface SendRequest {
  type: string;
  to: string;
  content: string;
  topic?: string;
  queueId?: string;
  localId?: string;
  readBySender?: boolean;
  /**
   * The realm's notification bot posting a notice (moved messages, resolved topics): it may post
   * in any channel, as Zulip's system bots do. Never set from a client's request.
   */
  asNotificationBot?: boolean;
  /** A widget the message starts instead of one from its content: an outgoing webhook's zform. Never from a client's request. */
  widget?: WidgetData;
  /** Only these recipients get the message unread; it starts read for the others (Zulip's limit_unread_user_ids). */
  unreadOnlyFor?: Set<number>;
  /** These recipients get it already read (Zulip's mark_as_read: a notice of their own action). */
  readFor?: Set<number>;
}

export interface SendResult {
  id: number;
  automatic_new_visibility_policy?: number;
}

/** Clients whose own messages start read (Zulip's `default_read_by_sender`). */
const READ_BY_SENDER_CLIENTS = new Set([
  "zulipandroid", "zulipios", "zulipdesktop", "zulipmobile", "zulipelectron", "zulipterminal", "snipe", "website", "ios", "android",
]);

/** Whether a client is one of Zulip's own apps, whose sender reads what they send: named above, or any desktop app. */
function readBySenderByDefault(client: string): boolean {
  const name = client.toLowerCase();
  return READ_BY_SENDER_CLIENTS.has(name) || name.includes("desktop app");
}

interface Plan {
  kind: "stream" | "private";
  accessed?: AccessedStream;
  topic: string;
  /** Everyone who gets a usermessage row, sender included. */
  recipientIds: number[];
  participants?: UserRow[];
  mutedStreamUserIds: Set<number>;
  /** Active subscribers of the channel (wildcard mention threshold). */
  subscriberCount: number;
  /** Subscribers whose subscription (or, inheriting, their default) asks for channel email notifications. */
  streamEmailUserIds: Set<number>;
}

interface Prepared {
  plan: Plan;
  /** What a channel send read in one round trip before deciding anything (null for direct messages). */
  context: StreamSendContext | null;
  /** The same for a direct message to user ids (null otherwise). */
  direct: DirectSendContext | null;
  content: string;
  rendered: RenderResult;
  sender: UserRow;
  realm: InternalRealm;
  groupMentioned: Set<number>;
  entries: Array<{ userId: number; flags: number }>;
  now: Date;
  /** The topic's links (linkifiers and web addresses), for the message event. */
  topicLinks: TopicLink[];
  /** Outgoing webhook bots the message triggers (delivered by jobs/outgoing-webhooks.ts). */
  serviceBots: ServiceBotTrigger[];
  /** Recipients (guests an organization limits) who do not access the sender: their event hides the sender. */
  hiddenFrom: Set<number>;
}

export interface ServiceBotTrigger {
  botId: number;
  trigger: "mention" | "direct_message";
}

/** Zulip's UserProfile.OUTGOING_WEBHOOK_BOT. */
const OUTGOING_WEBHOOK_BOT = 3;

/**
 * Zulip's get_service_bot_events: an active outgoing webhook bot is triggered by a loud mention in
 * a channel message and by a direct message it receives. Messages sent by bots trigger nothing,
 * so that bots answering each other cannot loop.
 */
function serviceBotTriggers(sender: UserRow, plan: Plan, rendered: RenderResult, dir: MentionDirectory): ServiceBotTrigger[] {
  if (sender.isBot) return [];
  if (plan.kind === "private") {
    return (plan.participants ?? [])
      .filter((u) => u.id !== sender.id && u.isActive && u.botType === OUTGOING_WEBHOOK_BOT)
      .map((u) => ({ botId: u.id, trigger: "direct_message" }));
  }
  const bots = new Set<number>();
  for (const u of [...dir.usersById.values(), ...[...dir.usersByName.values()].flat()]) {
    if (u.botType === OUTGOING_WEBHOOK_BOT && rendered.mentionedUserIds.has(u.id)) bots.add(u.id);
  }
  return [...bots].sort((a, b) => a - b).map((botId) => ({ botId, trigger: "mention" }));
}

/** Every check of a send, and the rendering, without storing anything (also the scheduler's pre-check). */
export async function prepareMessage(deps: AppDeps, who: Identity, req: SendRequest): Promise<Prepared> {
  const kind = messageKind(req.type);
  if (req.queueId !== undefined && req.localId === undefined) throw missingParam("local_id");
  const content = normalizeBody(req.content);
  const now = deps.clock.now();
  const realm = await deps.accounts.getRealm(who.realmId);
  const context = kind === "stream" ? await readStreamSendContext(deps, who, req) : null;
  const direct = kind === "private" ? await readDirectSendContext(deps, who, req) : null;
  const read = context?.sender ?? direct?.users.get(who.userId);
  // getUser also reads again a replica row without avatar data (the message event's avatar_url).
  const sender = read && read.emailPublic !== null ? read : await getUser(deps, who.realmId, who.userId);
  if (!sender || !sender.isActive) throw badRequest("Account is deactivated");

  const plan =
    kind === "stream" ? await planStreamMessage(deps, who, sender, realm, req, now, context) : await planDirectMessage(deps, who, sender, realm, req, direct);
  // The notification bot links any channel it tells of (a private one included), as Zulip's
  // system bots do; its notices go only to those who may see the channel.
  const systemBot = req.asNotificationBot === true && sender.id === realm.notification_bot_id;
  const dir = await buildMentionDirectory(deps, viewerOf(who), content, systemBot);
  const rendered = renderMessageContent(content, dir);
  // Only a topic wildcard mention uses the topic's participants, and reading them scans every
  // message of the topic (slower the longer it gets): ordinary sends skip it.
  const topicParticipants =
    plan.accessed && rendered.topicWildcard
      ? new Set(await selectTopicParticipants(deps.pool, who.realmId, plan.accessed.stream.id, plan.topic))
      : new Set<number>();
  topicParticipants.add(sender.id);
  if (plan.accessed) checkWildcardPolicy(plan, rendered, topicParticipants.size, sender, realm, now);
  const groupMentioned = new Set<number>();
  for (const groupId of rendered.mentionedGroupIds) {
    // Silent mentions notify nobody and need no permission; these are the loud ones.
    if (!(await deps.accounts.canMentionGroup(who.realmId, groupId, sender.id))) {
      const name = [...dir.groupsByName.values()].find((g) => g.id === groupId)?.name ?? "";
      throw badRequest(`You are not allowed to mention user group '${name}'.`);
    }
    for (const id of await deps.accounts.groupMembers(who.realmId, groupId)) groupMentioned.add(id);
  }
  const readBySender = req.readBySender ?? readBySenderByDefault(who.client);
  const entries = plan.recipientIds.map((userId) => ({
    userId,
    flags:
      recipientFlags(userId, plan, rendered, groupMentioned, topicParticipants, sender.id, readBySender) |
      ((req.unreadOnlyFor && !req.unreadOnlyFor.has(userId)) || req.readFor?.has(userId) ? FLAG_BITS.read : 0),
  }));
  // Recipients whose alert words the message contains get has_alert_word (issue 10).
  await markAlertWords(deps.pool, who.realmId, content, entries, context?.alertWords ?? direct?.alertWords);
  await markReadForMuters(deps.pool, who.realmId, sender.id, entries, context?.mutedBy ?? direct?.mutedBy);
  const links = plan.accessed ? topicLinks(plan.topic, dir.linkifiers) : [];
  const serviceBots = serviceBotTriggers(sender, plan, rendered, dir);
  const hiddenFrom = plan.accessed ? await guestsNotAccessingSender(deps.pool, realm, sender, plan.recipientIds) : new Set<number>();
  return { plan, context, direct, content, rendered, sender, realm, groupMentioned, entries, now, topicLinks: links, serviceBots, hiddenFrom };
}

/**
 * A direct message's reads in one round trip, when it names user ids the replica knows (and
 * not too many to read at once); null otherwise, and the read-through lookups run as before.
 */
async function readDirectSendContext(deps: AppDeps, who: Identity, req: SendRequest): Promise<DirectSendContext | null> {
  let recipients: number[] | string[];
  try {
    recipients = extractPrivateRecipients(req.to);
  } catch {
    return null;
  }
  if (recipients.length === 0 || recipients.length > 100 || typeof recipients[0] !== "number") return null;
  const ids = [who.userId, ...(recipients as number[])];
  const found = await selectDirectSendContext(deps.pool, who.realmId, who.userId, ids);
  return ids.every((id) => found.users.has(id)) ? found : null;
}

/**
 * The channel send's reads in one round trip (see selectStreamSendContext). Null when the
 * addressee cannot be read: planStreamMessage then reports the error as before.
 */
async function readStreamSendContext(deps: AppDeps, who: Identity, req: SendRequest): Promise<StreamSendContext | null> {
  let indicator: number | string;
  try {
    indicator = extractStreamIndicator(req.to);
  } catch {
    return null;
  }
  let topic: string | null;
  try {
    topic = normalizeTopic(req.topic);
  } catch {
    topic = null;
  }
  return selectStreamSendContext(deps.pool, who.realmId, who.userId, indicator, topic);
}

/** POST /messages and the internal send: validation, rules, then one statement or one transaction with the events. */
export async function doSendMessage(deps: AppDeps, who: Identity, req: SendRequest, idempotencyKey?: string): Promise<SendResult> {
  if (idempotencyKey !== undefined) {
    const prior = await selectSendKey(deps.pool, who.realmId, who.userId, idempotencyKey);
    if (prior) return priorResult(prior);
  }
  const prepared = await prepareMessage(deps, who, req);
  const { plan, context, direct, content, rendered, sender, realm, groupMentioned, entries, now, serviceBots } = prepared;
  const policyUsers = plan.accessed
    ? await automaticPolicyUsers(deps, who.realmId, plan, sender, rendered, groupMentioned, context?.senderSettings)
    : undefined;

  // A widget (`/poll`, `/todo`, a bot's zform) is the message's first submessage, written in
  // the transaction, and so are the deliveries to the bots it triggers.
  const widget = req.widget ?? widgetOf(content);
  const needsTx = idempotencyKey !== undefined || widget !== null || serviceBots.length > 0 || prepared.hiddenFrom.size > 0;
  const notices = emailNotices(prepared);
  const oneStatement = !needsTx ? oneStatementRecipient(deps, who, plan, context, direct, policyUsers, content) : null;
  if (oneStatement !== null) {
    const row = messageRow(who, sender, plan, oneStatement, content, rendered, now);
    const envelope = newEnvelope({ type: MESSAGE_SENT, realmId: row.realmId, payload: messageEventPayload(row, prepared, req) });
    row.id = await insertMessageWithEvent(deps.pool, newMessage(row, rendered), entries, envelope, MESSAGE_ID_PATHS, notices);
    return { id: row.id };
  }

  const sent = await withTx(deps.pool, async (tx): Promise<SendResult> => {
    if (idempotencyKey !== undefined) {
      await lockSendKey(tx, who.userId, idempotencyKey);
      const prior = await selectSendKey(tx, who.realmId, who.userId, idempotencyKey);
      if (prior) return priorResult(prior);
    }
    const stream = plan.accessed?.stream;
    // A direct conversation's first message gives guests an organization limits access to its other participants.
    const access = stream ? null : await accessBeforeInTx(tx, realm, plan.recipientIds, []);
    const recipientId = stream ? stream.recipientId : await upsertDirectRecipient(tx, who.realmId, plan.recipientIds);
    const row = messageRow(who, sender, plan, recipientId, content, rendered, now);
    const stored = await insertSentMessage(tx, newMessage(row, rendered), entries, notices);
    row.id = stored.id;
    const policy = stream ? await applyAutomaticPolicies(tx, plan, policyUsers!, stored, now) : undefined;
    const submessages = widget
      ? [await insertSubmessage(tx, row.realmId, { message_id: row.id, sender_id: row.senderId, msg_type: "widget", content: JSON.stringify(widget) })]
      : [];
    const payload = messageEventPayload(row, prepared, req, submessages);
    await emitEvent(tx, { type: MESSAGE_SENT, realmId: row.realmId, payload });
    if (prepared.hiddenFrom.size > 0) await notifySenderHiddenInTx(tx, row, prepared, payload);
    await notifyAccessChangedInTx(tx, access);
    // Zulip tells those who can see the channel its first message id (feature level 256).
    if (stream && stored.firstInChannel) await notifyFirstMessageId(tx, deps, row.realmId, stream.id, row.id);
    await deps.hooks.onMessageSent?.(tx, {
      id: row.id,
      realmId: row.realmId,
      senderId: row.senderId,
      content,
      renderedContent: rendered.html,
      streamId: row.streamId,
      dateSent: now,
    });
    if (idempotencyKey !== undefined) await insertSendKey(tx, who.realmId, who.userId, idempotencyKey, row.id, policy ?? null);
    if (serviceBots.length > 0) await insertDeliveries(tx, row.realmId, row.id, serviceBots, now);
    return policy === undefined ? { id: row.id } : { id: row.id, automatic_new_visibility_policy: policy };
  });
  // Committed: this process's delivery job starts on them at once.
  if (serviceBots.length > 0) wakeOutgoingWebhooks();
  return sent;
}

/**
 * The recipients the message may be mailed to while they are away (missed-message emails),
 * written with the message; the job judges their settings and presence when the mail is due.
 */
function emailNotices({ plan, context, sender, entries }: Prepared): EmailNotice[] {
  const unmailable = new Set((plan.participants ?? []).filter((u) => u.isBot || !u.isActive).map((u) => u.id));
  return emailNoticesOf({
    kind: plan.kind,
    senderId: sender.id,
    entries,
    unmailable,
    streamMuted: plan.mutedStreamUserIds,
    topicPolicies: context?.topic?.policies ?? new Map(),
    streamEmail: plan.streamEmailUserIds,
  });
}

/**
 * The scheduler's send (service to service): doSendMessage, answered only once this process has
 * published the message's event (bounded by outboxPublished's timeout). The scheduler publishes
 * its own events about the message after this answer (a scheduled message's removal), and events
 * of two services' outboxes keep no order between them.
 */
export async function doInternalSend(deps: AppDeps, who: Identity, req: SendRequest, idempotencyKey: string): Promise<SendResult> {
  const sent = await doSendMessage(deps, who, req, idempotencyKey);
  await outboxPublished();
  return sent;
}

/**
 * Most sends write nothing but the message and its event, in one statement without a
 * transaction (insertMessageWithEvent); this is their recipient id, or null when the send needs
 * the transaction: an upload to claim, a topic policy to set (judged by the topic as read before:
 * a policy changed since is what a send a moment earlier would have seen too), a direct
 * conversation's first message (its recipient row is created in the transaction), or a
 * channel's first message (its stream update event goes with it). A widget's message (`/poll`,
 * `/todo`) takes the transaction too: its submessage is written with it.
 */
function oneStatementRecipient(
  deps: AppDeps,
  who: Identity,
  plan: Plan,
  context: StreamSendContext | null,
  direct: DirectSendContext | null,
  policyUsers: PolicyUsers | undefined,
  content: string,
): number | null {
  const { onMessageSent, sendNeedsHook } = deps.hooks;
  if (onMessageSent && (sendNeedsHook?.(who.realmId, content) ?? true)) return null;
  const stream = plan.accessed?.stream;
  if (!stream) return direct?.recipientId ?? null;
  // A channel's first message also tells its watchers the channel's first message id.
  if (!context?.topic || stream.firstMessageId === null) return null;
  const before = { topicExisted: context.topic.existed, topicPolicies: context.topic.policies };
  return automaticPolicyChanges(plan, policyUsers!, before).writes.length === 0 ? stream.recipientId : null;
}

function messageRow(who: Identity, sender: UserRow, plan: Plan, recipientId: number, content: string, rendered: RenderResult, now: Date): MessageRow {
  return {
    id: 0,
    realmId: who.realmId,
    senderId: sender.id,
    recipientId,
    streamId: plan.accessed?.stream.id ?? null,
    topic: plan.topic,
    content,
    renderedContent: rendered.html,
    sendingClient: who.client,
    dateSent: now,
    lastEditTime: null,
    editHistory: null,
  };
}

function newMessage(row: MessageRow, rendered: RenderResult): NewMessage {
  return { ...row, hasLink: rendered.hasLink, hasImage: rendered.hasImage, hasAttachment: rendered.hasAttachment };
}

function priorResult(prior: { messageId: number; policy: number | null }): SendResult {
  return prior.policy === null ? { id: prior.messageId } : { id: prior.messageId, automatic_new_visibility_policy: prior.policy };
}

async function planStreamMessage(
  deps: AppDeps,
  who: Identity,
  sender: UserRow,
  realm: InternalRealm,
  req: SendRequest,
  now: Date,
  context: StreamSendContext | null,
): Promise<Plan> {
  const indicator = extractStreamIndicator(req.to);
  const viewer = viewerOf(who);
  const found = context ? (context.stream ? { stream: context.stream, sub: context.senderSub } : null) : await findStream(deps.pool, viewer, indicator);
  const subs = found ? (context ? context.subscribers : await selectStreamSubscriptions(deps.pool, who.realmId, found.stream.id)) : [];
  // A channel the sender may not see looks missing (Zulip says "Not authorized to send to
  // channel" here, which tells a guest or member that a private channel of that name exists; the
  // isolation tests hold every endpoint to answering as for a missing one), except that a bot
  // sees the private channels its owner is subscribed to (it may post there, as in Zulip).
  const ownerSubscribed = sender.isBot && sender.botOwnerId !== null && subs.some((s) => s.userId === sender.botOwnerId);
  const systemBot = req.asNotificationBot === true && sender.id === realm.notification_bot_id;
  const accessed = found && (canSeeStream(viewer, found.stream, found.sub) || ownerSubscribed || systemBot) ? found : null;
  if (!accessed) throw streamDoesNotExist(typeof indicator === "number" ? { id: indicator } : { name: indicator });
  const topic = normalizeTopic(req.topic);
  await checkCanPost(deps, who, sender, realm, accessed, now, ownerSubscribed);
  const recipientIds = [...new Set([...subs.map((s) => s.userId), sender.id])].sort((a, b) => a - b);
  return {
    kind: "stream",
    accessed,
    topic,
    recipientIds,
    mutedStreamUserIds: new Set(subs.filter((s) => s.isMuted).map((s) => s.userId)),
    subscriberCount: subs.length,
    // Without the send context (never for a send that gets this far) only explicit choices count.
    streamEmailUserIds: new Set(subs.filter((s) => s.emailNotifications ?? context?.streamEmailByDefault.has(s.userId) ?? false).map((s) => s.userId)),
  };
}

/** Zulip's access_stream_for_send_message once the channel was found (a send, a typing notification). */
export async function checkCanPost(
  deps: AppDeps,
  who: Identity,
  sender: UserRow,
  realm: InternalRealm,
  accessed: AccessedStream,
  now: Date,
  /** The sender is a bot whose owner is subscribed to the channel. */
  ownerSubscribed: boolean,
): Promise<void> {
  if (sender.id === realm.notification_bot_id) return;
  const { stream, sub } = accessed;
  const waiting = realm.settings.waiting_period_threshold;
  const owner = sender.isBot && sender.botOwnerId !== null ? await getUser(deps, who.realmId, sender.botOwnerId) : undefined;
  const refusal = postPolicyRefusal(stream.streamPostPolicy, sender, waiting, now);
  // A bot may post where its owner may.
  if (refusal && !(owner && postPolicyRefusal(stream.streamPostPolicy, owner, waiting, now) === null)) throw badRequest(refusal);
  const mustBeSubscribed = stream.inviteOnly || isGuestRole(sender.role);
  if (mustBeSubscribed && !sub?.active && !ownerSubscribed) throw badRequest(`Not authorized to send to channel '${stream.name}'`);
}

async function planDirectMessage(
  deps: AppDeps,
  who: Identity,
  sender: UserRow,
  realm: InternalRealm,
  req: SendRequest,
  direct: DirectSendContext | null,
): Promise<Plan> {
  const recipients = extractPrivateRecipients(req.to);
  if (recipients.length === 0) throw badRequest("Message must have recipients");
  let users: UserRow[];
  if (typeof recipients[0] === "number") {
    const ids = recipients as number[];
    const found = direct?.users ?? (await getUsersByIds(deps, who.realmId, ids));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
    users = ids.map((id) => found.get(id)!);
  } else {
    const emails = recipients as string[];
    const found = await getUsersByEmails(deps, who.realmId, emails);
    const missing = emails.find((e) => !found.has(e.toLowerCase()));
    if (missing !== undefined) throw badRequest(`Invalid email '${missing}'`);
    users = emails.map((e) => found.get(e.toLowerCase())!);
  }
  // Before anything else is told about the recipients (a deactivated one's email).
  await checkCanAccessRecipients(deps.pool, realm, sender, users);
  const inactive = users.find((u) => !u.isActive);
  if (inactive) throw badRequest(`'${inactive.email}' is no longer using Zulip.`);
  checkPrivateMessagePolicy(realm, sender, users);
  const participants = [...new Map([...users, sender].map((u) => [u.id, u])).values()].sort((a, b) => a.id - b.id);
  return {
    kind: "private",
    topic: "",
    recipientIds: participants.map((u) => u.id),
    participants,
    mutedStreamUserIds: new Set(),
    subscriberCount: 0,
    streamEmailUserIds: new Set(),
  };
}

/**
 * Zulip's check_private_message_policy: with direct messages disabled (2), only messages from a
 * bot, or to a single bot, go through (the notification bot's and integrations' keep working).
 */
function checkPrivateMessagePolicy(realm: InternalRealm, sender: UserRow, recipients: UserRow[]): void {
  if (realm.settings.private_message_policy !== 2) return;
  if (sender.isBot || (recipients.length === 1 && recipients[0].isBot)) return;
  throw badRequest("Direct messages are disabled in this organization.");
}

function checkWildcardPolicy(plan: Plan, rendered: RenderResult, topicParticipantCount: number, sender: UserRow, realm: InternalRealm, now: Date): void {
  const allowed = () => passesWildcardPolicy(realm.settings.wildcard_mention_policy, sender, realm.settings.waiting_period_threshold, now);
  if (rendered.streamWildcard && plan.subscriberCount > WILDCARD_MENTION_THRESHOLD && !allowed()) {
    throw new ApiError("STREAM_WILDCARD_MENTION_NOT_ALLOWED", "You do not have permission to use channel wildcard mentions in this channel.");
  }
  if (rendered.topicWildcard && topicParticipantCount > WILDCARD_MENTION_THRESHOLD && !allowed()) {
    throw new ApiError("TOPIC_WILDCARD_MENTION_NOT_ALLOWED", "You do not have permission to use topic wildcard mentions in this topic.");
  }
}

function recipientFlags(
  userId: number,
  plan: Plan,
  rendered: RenderResult,
  groupMentioned: Set<number>,
  topicParticipants: Set<number>,
  senderId: number,
  readBySender: boolean,
): number {
  let flags = 0;
  if (plan.kind === "private") flags |= FLAG_BITS.is_private;
  if (userId === senderId && readBySender) flags |= FLAG_BITS.read;
  if (rendered.mentionedUserIds.has(userId) || groupMentioned.has(userId)) flags |= FLAG_BITS.mentioned;
  if (rendered.streamWildcard) flags |= FLAG_BITS.stream_wildcard_mentioned;
  // In a direct message everyone present is a participant of the conversation.
  if (rendered.topicWildcard && (plan.kind === "private" || topicParticipants.has(userId))) flags |= FLAG_BITS.topic_wildcard_mentioned;
  return flags;
}

interface PolicyUsers {
  sender: UserRow;
  /** Mentioned (personally or through a group) human recipients, the sender included if named. */
  mentioned: number[];
  /** Their settings (accounts owns them; messaging keeps a replica). */
  settings: Map<number, UserSettingsView>;
}

/** Who the automatic topic policies may concern, with their settings (read before the transaction). */
async function automaticPolicyUsers(
  deps: AppDeps,
  realmId: number,
  plan: Plan,
  sender: UserRow,
  rendered: RenderResult,
  groupMentioned: Set<number>,
  senderSettings: StoredUserSettings | undefined,
): Promise<PolicyUsers> {
  const recipients = new Set(plan.recipientIds);
  const named = [...new Set([...rendered.mentionedUserIds, ...groupMentioned])].filter((id) => recipients.has(id));
  const users = named.length > 0 ? await getUsersByIds(deps, realmId, named) : new Map<number, UserRow>();
  const mentioned = named.filter((id) => users.get(id)?.isActive && !users.get(id)?.isBot).sort((a, b) => a - b);
  const known = senderSettings ? new Map([[sender.id, senderSettings]]) : undefined;
  const settings = await getUserSettings(deps, realmId, sender.isBot ? mentioned : [sender.id, ...mentioned], known);
  return { sender, mentioned, settings };
}

/**
 * Zulip's automatic topic visibility, per each user's settings: the sender's follow / unmute
 * policies (see policyAfterSend), then mentioned users follow the topic when they chose to.
 * Returns the sender's new policy when it changed.
 */
async function applyAutomaticPolicies(tx: Queryable, plan: Plan, users: PolicyUsers, stored: StoredSend, now: Date): Promise<number | undefined> {
  const stream = plan.accessed!.stream;
  const { senderPolicy, writes } = automaticPolicyChanges(plan, users, stored);
  for (const w of writes) await setVisibilityPolicy(tx, stream.realmId, w.userId, stream.id, plan.topic, w.policy, now);
  return senderPolicy;
}

/** The policies a send sets, given the topic as it was before it; the sender's new one apart. */
function automaticPolicyChanges(
  plan: Plan,
  users: PolicyUsers,
  before: Pick<StoredSend, "topicExisted" | "topicPolicies">,
): { senderPolicy: number | undefined; writes: Array<{ userId: number; policy: number }> } {
  const { sender } = users;
  const current = new Map(before.topicPolicies);
  const writes: Array<{ userId: number; policy: number }> = [];
  let senderPolicy: number | undefined;
  if (!sender.isBot) {
    const s = users.settings.get(sender.id)!;
    senderPolicy = policyAfterSend({
      followPolicy: s.followTopicsPolicy,
      unmutePolicy: s.unmuteTopicsInMutedStreamsPolicy,
      current: current.get(sender.id) ?? VISIBILITY.inherit,
      streamMuted: plan.mutedStreamUserIds.has(sender.id),
      startsTopic: !before.topicExisted,
    });
    if (senderPolicy !== undefined) {
      writes.push({ userId: sender.id, policy: senderPolicy });
      current.set(sender.id, senderPolicy);
    }
  }
  for (const userId of users.mentioned) {
    if (!followsWhenMentioned(users.settings.get(userId)!.followTopicsWhereMentioned, current.get(userId) ?? VISIBILITY.inherit)) continue;
    writes.push({ userId, policy: VISIBILITY.followed });
  }
  return { senderPolicy, writes };
}

const MESSAGE_SENT = "messaging.message.sent";
/** Where messageEventPayload puts the message's id (insertMessageWithEvent fills them in). */
const MESSAGE_ID_PATHS = [["message_id"], ["client", "event", "message", "id"]];

function messageEventPayload(row: MessageRow, prepared: Prepared, req: SendRequest, submessages: SubmessageRow[] = []): Record<string, unknown> {
  const { plan, entries, sender, realm } = prepared;
  const message = messageObject(row, {
    sender,
    streamName: plan.accessed?.stream.name,
    participants: plan.participants,
    realmStr: realm.string_id,
    applyMarkdown: true,
    // Null only where clients may compute it; queues without client_gravatar get sender_avatar_url.
    clientGravatar: true,
    topicLinks: prepared.topicLinks,
    submessages,
    notificationBotId: realm.notification_bot_id,
  });
  const stream = plan.accessed?.stream;
  const avatar = message.avatar_url === null ? { sender_avatar_url: senderAvatarUrl(sender, false)! } : {};
  const client: Record<string, unknown> = {
    event: { type: "message", message, markdown_content: row.content, ...avatar },
    users: entries.filter((e) => !prepared.hiddenFrom.has(e.userId)).map((e) => ({ id: e.userId, flags: flagsToList(e.flags) })),
  };
  if (stream && !stream.inviteOnly) client.public_stream_id = stream.id;
  if (req.queueId !== undefined && req.localId !== undefined) client.sender_queue = { queue_id: req.queueId, local_id: req.localId };
  return MessagingMessageSent.parse({
    message_id: row.id,
    sender_id: sender.id,
    user_ids: entries.map((e) => e.userId),
    stream_id: row.streamId,
    topic: row.streamId === null ? null : row.topic,
    client,
  });
}

/**
 * The message's event for the recipients who do not access its sender (prepared.hiddenFrom):
 * Zulip's stand-in for the sender (name, email, avatar), everything else as the others'.
 */
async function notifySenderHiddenInTx(tx: Queryable, row: MessageRow, prepared: Prepared, sent: Record<string, unknown>): Promise<void> {
  const { event } = (sent as { client: { event: Record<string, unknown> & { message: Record<string, unknown> } } }).client;
  const { sender_avatar_url: _url, ...rest } = event;
  const message = {
    ...event.message,
    sender_full_name: INACCESSIBLE_USER_NAME,
    sender_email: inaccessibleUserEmail(row.senderId, prepared.realm.string_id),
    avatar_url: INACCESSIBLE_USER_AVATAR_PATH,
  };
  const users = prepared.entries.filter((e) => prepared.hiddenFrom.has(e.userId)).map((e) => ({ id: e.userId, flags: flagsToList(e.flags) }));
  await emitEvent(tx, {
    type: "messaging.message.sender_hidden",
    realmId: row.realmId,
    payload: MessagingMessageSenderHidden.parse({ message_id: row.id, client: { event: { ...rest, message }, users } }),
  });
}

/**
 * The scheduler's dry run of a send (`POST /internal/messages/check`): every check doSendMessage
 * makes before storing (addressee, access, posting policy, wildcard policy), nothing stored.
 * Returns the normalized content and topic and the rendering a scheduled message keeps.
 */
export async function checkMessage(deps: AppDeps, who: Identity, req: SendRequest): Promise<{ content: string; topic: string | null; rendered_content: string }> {
  const { plan, content, rendered } = await prepareMessage(deps, who, req);
  return { content, topic: plan.kind === "stream" ? plan.topic : null, rendered_content: rendered.html };
}
