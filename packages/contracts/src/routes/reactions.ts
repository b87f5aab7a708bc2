import { z } from "zod";
import { p } from "../params";
import { empty, route } from "../route";

export const REACTION_TYPES = ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"] as const;
export const ReactionType = z.enum(REACTION_TYPES);
export type ReactionType = z.infer<typeof ReactionType>;

/**
 * One reaction in a message object's `reactions`. `user` is the legacy copy of the reacting user
 * that Zulip still sends at feature level 267 (it dropped it at 328).
 */
export const MessageReaction = z.strictObject({
  emoji_name: z.string(),
  emoji_code: z.string(),
  reaction_type: ReactionType,
  user_id: z.number().int(),
  user: z.strictObject({ id: z.number().int(), email: z.string(), full_name: z.string(), is_mirror_dummy: z.boolean() }),
});
export type MessageReaction = z.infer<typeof MessageReaction>;

/**
 * Adds the caller's reaction. Without `emoji_code` or `reaction_type` the emoji is looked up by
 * name: the organization's active custom emoji first, then `zulip`, then the Unicode names.
 */
export const AddReaction = route({
  method: "POST",
  path: "/messages/{message_id}/reactions",
  service: "messaging",
  auth: "user",
  params: {
    message_id: p.int().path(),
    emoji_name: p.str().required(),
    emoji_code: p.str(),
    reaction_type: p.str(),
  },
  response: empty,
});

/** Removes the caller's reaction, given by `emoji_code` (+ `reaction_type`) or by `emoji_name`. */
export const RemoveReaction = route({
  method: "DELETE",
  path: "/messages/{message_id}/reactions",
  service: "messaging",
  auth: "user",
  params: {
    message_id: p.int().path(),
    emoji_name: p.str(),
    emoji_code: p.str(),
    reaction_type: p.str(),
  },
  response: empty,
});

/**
 * Zulip's POST /submessage: a vote, an option or a task added to the widget (`/poll`, `/todo`) a
 * message started; `content` is the widget's JSON data. To the message's recipients as a
 * `submessage` event.
 */
export const AddSubmessage = route({
  method: "POST",
  path: "/submessage",
  service: "messaging",
  auth: "user",
  params: {
    message_id: p.int().required(),
    msg_type: p.str().required(),
    content: p.str().required(),
  },
  response: empty,
});
