import { AddReaction, AddSubmessage, RemoveReaction } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doAddReaction, doRemoveReaction } from "../actions/reactions";
import { doAddSubmessage } from "../actions/submessages";

export const reactionRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, AddReaction, async ({ params, identity }) => {
    await doAddReaction(deps, identity, params.message_id, { emojiName: params.emoji_name, emojiCode: params.emoji_code, reactionType: params.reaction_type });
    return {};
  });

  registerRoute(app, AddSubmessage, async ({ params, identity }) => {
    await doAddSubmessage(deps, identity, { messageId: params.message_id, msgType: params.msg_type, content: params.content });
    return {};
  });

  registerRoute(app, RemoveReaction, async ({ params, identity }) => {
    await doRemoveReaction(deps, identity, params.message_id, { emojiName: params.emoji_name, emojiCode: params.emoji_code, reactionType: params.reaction_type });
    return {};
  });
};
