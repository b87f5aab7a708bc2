import { MessagingReactionAdded, MessagingReactionRemoved, type ReactionClientEvent } from "@chat/contracts";
import { ApiError, badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { checkEmojiRequest, emojiDataByName, type EmojiData } from "../lib/emoji";
import { FLAG_BITS } from "../lib/flags";
import type { UserSettingsView } from "../lib/user-settings";
import { policyAfterParticipation, VISIBILITY } from "../lib/visibility-policy";
import { accessMessagesById } from "../queries/message-access";
import { messageActionAudience } from "../queries/message-event-audience";
import { getCustomEmojiLookup } from "../queries/realm-emoji";
import { viewerOf } from "../queries/streams";
import { getUser } from "../queries/users";
import { getUserSettings } from "../queries/user-settings";
import { lockMessageForEdit, type MessageRow } from "../store/messages";
import { deleteReaction, insertReaction, selectReactionByCode, type ReactionRow } from "../store/reactions";
import { selectSubscription } from "../store/subscriptions";
import { selectUserTopic } from "../store/user-topics";
import { insertOwnRowsIfAbsent } from "../store/usermessages";
import { setVisibilityPolicy } from "./user-topics";

export interface ReactionRequest {
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

const alreadyExists = () => new ApiError("REACTION_ALREADY_EXISTS", "Reaction already exists.");
const doesNotExist = () => new ApiError("REACTION_DOES_NOT_EXIST", "Reaction doesn't exist.");

/**
 * The message for a reaction or a submessage, locked until the transaction ends (Zulip's
 * lock_message=True: reactions to one message, its submessages, edits and deletion wait for each
 * other). `own` is whether the user has their own row for it (else they read it through the
 * channel's history).
 */
export async function accessLockedMessage(tx: Queryable, who: Identity, messageId: number): Promise<{ message: MessageRow; own: boolean }> {
  // Locked first, so that access is judged on the message as it stays (a move waits).
  const locked = await lockMessageForEdit(tx, who.realmId, messageId);
  const accessed = locked ? (await accessMessagesById(tx, viewerOf(who), [messageId])).get(messageId) : undefined;
  if (!accessed) throw badRequest("Invalid message(s)");
  return { message: accessed.row, own: accessed.flags !== null };
}

/** POST /messages/{id}/reactions: Zulip's check_add_reaction. */
export async function doAddReaction(deps: AppDeps, who: Identity, messageId: number, req: ReactionRequest & { emojiName: string }): Promise<void> {
  // Read before the message is locked (the replicas may have to ask accounts).
  const [custom, reactor, settings] = await Promise.all([
    getCustomEmojiLookup(deps.pool, who.realmId),
    reactingUser(deps, who),
    getUserSettings(deps, who.realmId, [who.userId]).then((all) => all.get(who.userId)!),
  ]);
  await withTx(deps.pool, async (tx) => {
    const { message, own } = await accessLockedMessage(tx, who, messageId);
    // Only what was not given comes from the name; a given code must then match it (checked
    // below), as in Zulip's check_add_reaction.
    const byName = req.emojiCode === undefined || req.reactionType === undefined ? emojiDataByName(req.emojiName, custom.activeByName) : undefined;
    const emoji: EmojiData = {
      emojiCode: req.emojiCode ?? byName!.emojiCode,
      reactionType: (req.reactionType as EmojiData["reactionType"] | undefined) ?? byName!.reactionType,
    };
    if (await selectReactionByCode(tx, who.realmId, messageId, emoji, who.userId)) throw alreadyExists();
    // Another user's reaction with this emoji: this one is a vote for it, under its name (which
    // may no longer pass the checks, a deactivated custom emoji's say), so that one image never
    // shows under two names. A new emoji must be a valid one.
    const existing = await selectReactionByCode(tx, who.realmId, messageId, emoji);
    const emojiName = existing ? existing.emojiName : req.emojiName;
    if (!existing) checkEmojiRequest(emojiName, emoji.emojiCode, emoji.reactionType, custom.byId);
    // Reacting to a message read through the channel's history gives the user their own row.
    if (!own) await insertOwnRowsIfAbsent(tx, who.realmId, who.userId, [messageId], FLAG_BITS.read | FLAG_BITS.historical);
    const reaction: ReactionRow = { messageId, userId: who.userId, emojiName, ...emoji };
    if (!(await insertReaction(tx, who.realmId, reaction))) throw alreadyExists();
    await followOnParticipation(deps, tx, who, message, settings);
    await notifyReactionUpdate(tx, who, reactor, message, reaction, "add");
  });
}

/**
 * DELETE /messages/{id}/reactions: Zulip's check_remove_reaction. The emoji is given by code
 * (type unicode_emoji unless said) or, for simple clients, by name (its current code and type).
 * A reaction that exists is removed without checking its emoji, which may be gone since.
 */
export async function doRemoveReaction(deps: AppDeps, who: Identity, messageId: number, req: ReactionRequest): Promise<void> {
  const [custom, reactor] = await Promise.all([getCustomEmojiLookup(deps.pool, who.realmId), reactingUser(deps, who)]);
  await withTx(deps.pool, async (tx) => {
    const { message } = await accessLockedMessage(tx, who, messageId);
    let emoji: EmojiData;
    if (req.emojiCode !== undefined) {
      emoji = { emojiCode: req.emojiCode, reactionType: (req.reactionType ?? "unicode_emoji") as EmojiData["reactionType"] };
    } else {
      if (req.emojiName === undefined) throw badRequest("At least one of the following arguments must be present: emoji_name, emoji_code");
      const byName = emojiDataByName(req.emojiName, custom.activeByName);
      emoji = { emojiCode: byName.emojiCode, reactionType: (req.reactionType ?? byName.reactionType) as EmojiData["reactionType"] };
    }
    const removed = await deleteReaction(tx, who.realmId, messageId, who.userId, emoji);
    if (!removed) throw doesNotExist();
    await notifyReactionUpdate(tx, who, reactor, message, removed, "remove");
  });
}

/** The reacting user as the event's legacy `user` shows them (their API email). */
async function reactingUser(deps: AppDeps, who: Identity): Promise<ReactionClientEvent["user"]> {
  const user = await getUser(deps, who.realmId, who.userId);
  return { user_id: who.userId, email: user?.email ?? who.email, full_name: user?.fullName ?? "" };
}

/** Reacting is participating in the topic: the user's automatic follow / unmute policies apply. */
async function followOnParticipation(deps: AppDeps, tx: Queryable, who: Identity, message: MessageRow, settings: UserSettingsView): Promise<void> {
  if (message.streamId === null || who.isBot) return;
  const [sub, held] = await Promise.all([
    selectSubscription(tx, who.realmId, who.userId, message.streamId),
    selectUserTopic(tx, who.realmId, who.userId, message.streamId, message.topic),
  ]);
  const policy = policyAfterParticipation({
    followPolicy: settings.followTopicsPolicy,
    unmutePolicy: settings.unmuteTopicsInMutedStreamsPolicy,
    current: held?.visibilityPolicy ?? VISIBILITY.inherit,
    streamMuted: Boolean(sub?.active && sub.isMuted),
  });
  if (policy !== undefined) await setVisibilityPolicy(tx, who.realmId, who.userId, message.streamId, message.topic, policy, deps.clock.now());
}

/** Zulip's notify_reaction_update: the reaction event to everyone who can see the message. */
async function notifyReactionUpdate(tx: Queryable, who: Identity, reactor: ReactionClientEvent["user"], message: MessageRow, r: ReactionRow, op: "add" | "remove") {
  const event: ReactionClientEvent = {
    type: "reaction",
    op,
    user_id: who.userId,
    user: reactor,
    message_id: message.id,
    emoji_name: r.emojiName,
    emoji_code: r.emojiCode,
    reaction_type: r.reactionType,
  };
  const change = { message_id: message.id, user_id: who.userId, emoji_name: r.emojiName, emoji_code: r.emojiCode, reaction_type: r.reactionType };
  const client = { event, users: await messageActionAudience(tx, message) };
  await emitEvent(tx, {
    type: op === "add" ? "messaging.reaction.added" : "messaging.reaction.removed",
    realmId: who.realmId,
    payload: (op === "add" ? MessagingReactionAdded : MessagingReactionRemoved).parse({ ...change, client }),
  });
}
