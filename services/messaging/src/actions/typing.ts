import { inaccessibleUserEmail, MessagingTypingStarted, MessagingTypingStopped, type TypingClientEvent } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { accessStreamById, viewerOf } from "../queries/streams";
import { getUser, getUsersByIds } from "../queries/users";
import { getUserSettings } from "../queries/user-settings";
import { guestsNotAccessingSender, participantsUnseenByGuests } from "../queries/user-access";
import { selectSubscriberIds } from "../store/subscriptions";
import type { UserRow } from "../store/users";
import { checkCanPost } from "./messages";

/**
 * Zulip sends no channel typing notifications in channels with more subscribers than this
 * (`MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS`, zproject/default_settings.py), for performance.
 */
export const MAX_CHANNEL_SIZE_FOR_TYPING_NOTIFICATIONS = 100;

export interface TypingRequest {
  type: "direct" | "private" | "stream" | "channel";
  op: "start" | "stop";
  to?: number[];
  streamId?: number;
  topic?: string;
}

/** POST /typing (Zulip's send_notification_backend): checks, then the typing event for whoever would receive the message. */
export async function doSendTypingNotification(deps: AppDeps, who: Identity, req: TypingRequest): Promise<void> {
  if (req.type === "stream" || req.type === "channel") await doSendChannelTyping(deps, who, req);
  else await doSendDirectTyping(deps, who, req);
}

const typingUser = (u: UserRow) => ({ user_id: u.id, email: u.email });

/**
 * The recipients are the ids given plus the sender; an id that is no user of the organization
 * refuses the whole request. Deactivated users stay among the event's recipients (the
 * conversation is theirs too) but are not told, and neither are users who turned receiving
 * typing notifications off (Zulip's check_send_typing_notification), nor the guests an
 * organization that limits guests keeps from the sender (before a first message, a guest may
 * share nothing with them yet). The sender is not told who was left out: the request succeeds.
 * Such a guest may type to users it does not access (Zulip checks no access for typing, though
 * it refuses the message itself).
 * A guest who is told but does not access some other participant sees that participant as
 * Zulip's "Unknown user" stand-in (the real id, the stand-in's email), as a hidden sender is shown.
 */
async function doSendDirectTyping(deps: AppDeps, who: Identity, req: TypingRequest): Promise<void> {
  if (req.to === undefined) throw badRequest("Missing 'to' argument");
  if (req.to.length === 0) throw badRequest("Empty 'to' list");
  const own = (await getUserSettings(deps, who.realmId, [who.userId])).get(who.userId)!;
  if (!own.sendPrivateTypingNotifications) throw badRequest("User has disabled typing notifications for direct messages");
  const ids = [...new Set([...req.to, who.userId])];
  const users = await getUsersByIds(deps, who.realmId, ids);
  const missing = ids.find((id) => !users.has(id));
  if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
  const recipients = ids.map((id) => users.get(id)!);
  const realm = await deps.accounts.getRealm(who.realmId);
  const event = (hide: ReadonlySet<number>): TypingClientEvent => ({
    type: "typing",
    op: req.op,
    message_type: "direct",
    sender: typingUser(users.get(who.userId)!),
    // A participant the receiver does not access is Zulip's stand-in there, as elsewhere: the
    // id stays (it tells which conversation this is), the email is the stand-in's.
    recipients: recipients.map((u) => (hide.has(u.id) ? { user_id: u.id, email: inaccessibleUserEmail(u.id, realm.string_id) } : typingUser(u))),
  });
  const active = recipients.filter((u) => u.isActive).map((u) => u.id);
  const hidden = await guestsNotAccessingSender(deps.pool, realm, users.get(who.userId)!, active);
  const told = await receivingTyping(deps, who.realmId, active.filter((id) => !hidden.has(id)));
  // The receivers who do not access every participant (guests, before a first message) get
  // their own copy, one per set of participants hidden from them; the others share one.
  const unseen = await participantsUnseenByGuests(deps.pool, realm, told, recipients);
  const copies = new Map<string, { hide: Set<number>; users: number[] }>();
  for (const id of told) {
    const hide = unseen.get(id) ?? new Set<number>();
    const key = [...hide].sort((a, b) => a - b).join(",");
    const copy = copies.get(key);
    if (copy) copy.users.push(id);
    else copies.set(key, { hide, users: [id] });
  }
  await notifyTyping(deps, who, [...copies.values()].map((c) => ({ event: event(c.hide), users: c.users })));
}

/**
 * Channel typing needs what a send there needs (the channel visible to the sender, its posting
 * policy); the event goes to the channel's active subscribers who receive typing notifications,
 * the sender among them, but for guests who do not access the sender, and to nobody in a channel
 * of more than 100 subscribers (Zulip's do_send_stream_typing_notification).
 */
async function doSendChannelTyping(deps: AppDeps, who: Identity, req: TypingRequest): Promise<void> {
  if (req.streamId === undefined) throw badRequest("Missing channel ID");
  if (req.topic === undefined) throw badRequest("Missing topic");
  const own = (await getUserSettings(deps, who.realmId, [who.userId])).get(who.userId)!;
  if (!own.sendStreamTypingNotifications) throw badRequest("User has disabled typing notifications for channel messages");
  const accessed = await accessStreamById(deps.pool, viewerOf(who), req.streamId);
  const sender = await getUser(deps, who.realmId, who.userId);
  if (!sender) throw badRequest("Account is deactivated");
  const subscribers = (await selectSubscriberIds(deps.pool, who.realmId, [accessed.stream.id])).get(accessed.stream.id) ?? [];
  const ownerSubscribed = sender.isBot && sender.botOwnerId !== null && subscribers.includes(sender.botOwnerId);
  const realm = await deps.accounts.getRealm(who.realmId);
  await checkCanPost(deps, who, sender, realm, accessed, deps.clock.now(), ownerSubscribed);
  if (subscribers.length > MAX_CHANNEL_SIZE_FOR_TYPING_NOTIFICATIONS) return;
  // A sender not subscribed may be someone a guest the organization limits does not access: not told, as their message hides them.
  const hidden = await guestsNotAccessingSender(deps.pool, realm, sender, subscribers);
  const event: TypingClientEvent = {
    type: "typing",
    op: req.op,
    message_type: "stream",
    sender: typingUser(sender),
    stream_id: accessed.stream.id,
    // Zulip strips the topic parameter's whitespace and uses it as given otherwise.
    topic: req.topic.trim(),
  };
  await notifyTyping(deps, who, [{ event, users: await receivingTyping(deps, who.realmId, subscribers.filter((id) => !hidden.has(id))) }]);
}

/** Those of `userIds` who receive typing notifications (their receives_typing_notifications). */
async function receivingTyping(deps: AppDeps, realmId: number, userIds: number[]): Promise<number[]> {
  const settings = await getUserSettings(deps, realmId, userIds);
  return userIds.filter((id) => settings.get(id)!.receivesTypingNotifications);
}

/**
 * Nothing is stored: an outbox row per copy of the event (one, unless receivers see the
 * participants differently), so the event keeps its place among the realm's events.
 */
async function notifyTyping(deps: AppDeps, who: Identity, copies: Array<{ event: TypingClientEvent; users: number[] }>): Promise<void> {
  const rows = copies
    .filter((c) => c.users.length > 0)
    .map(({ event, users }) => {
      const [type, schema] = event.op === "start" ? ["messaging.typing.started", MessagingTypingStarted] : ["messaging.typing.stopped", MessagingTypingStopped];
      return { type, payload: schema.parse({ sender_id: who.userId, client: { event, users } }) };
    });
  if (rows.length === 0) return;
  await withTx(deps.pool, async (tx) => {
    for (const { type, payload } of rows) await emitEvent(tx, { type, realmId: who.realmId, payload });
  });
}
