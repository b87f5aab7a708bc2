import { z } from "zod";
import { ReactionType } from "../routes/reactions";
import { RealmEmojiDict } from "../routes/realm-emoji";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/**
 * A reaction added to or removed from a message, to the users who can see the message. `user`
 * is the legacy copy of the reacting user Zulip still sends at feature level 267.
 */
export const ReactionClientEvent = z.strictObject({
  type: z.literal("reaction"),
  op: z.enum(["add", "remove"]),
  user_id: z.number().int(),
  user: z.strictObject({ user_id: z.number().int(), email: z.string(), full_name: z.string() }),
  message_id: z.number().int(),
  emoji_name: z.string(),
  emoji_code: z.string(),
  reaction_type: ReactionType,
});
export type ReactionClientEvent = z.infer<typeof ReactionClientEvent>;

const ReactionChange = z.object({
  message_id: z.number().int(),
  user_id: z.number().int(),
  emoji_name: z.string(),
  emoji_code: z.string(),
  reaction_type: ReactionType,
  client: noticeOf(ReactionClientEvent),
});

export const MessagingReactionAdded = defineEvent("messaging.reaction.added", ReactionChange);
export const MessagingReactionRemoved = defineEvent("messaging.reaction.removed", ReactionChange);

/** The organization's whole custom emoji dictionary after a change, to all its users. */
export const RealmEmojiClientEvent = z.strictObject({
  type: z.literal("realm_emoji"),
  op: z.literal("update"),
  realm_emoji: RealmEmojiDict,
});
export type RealmEmojiClientEvent = z.infer<typeof RealmEmojiClientEvent>;

/**
 * A custom emoji was uploaded or deactivated: `realm_emoji` is the whole dictionary after the
 * change (deactivated ones included). For replicas (accounts checks status emoji against it):
 * emoji are never deleted nor reactivated, so merging dictionaries (every id seen; deactivated
 * once deactivated anywhere) is right whatever order, or how often, the events arrive.
 */
export const MessagingRealmEmojiUpdated = defineEvent(
  "messaging.realm_emoji.updated",
  z.object({ realm_emoji: RealmEmojiDict, client: noticeOf(RealmEmojiClientEvent) }),
);

/** A submessage added to a message's widget, to the message's recipients (Zulip's do_add_submessage). */
export const SubmessageClientEvent = z.strictObject({
  type: z.literal("submessage"),
  msg_type: z.string(),
  message_id: z.number().int(),
  submessage_id: z.number().int(),
  sender_id: z.number().int(),
  content: z.string(),
});
export const MessagingSubmessageAdded = defineEvent(
  "messaging.submessage.added",
  z.object({ message_id: z.number().int(), submessage_id: z.number().int(), client: noticeOf(SubmessageClientEvent) }),
);
