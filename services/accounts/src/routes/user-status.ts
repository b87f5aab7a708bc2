import { GetUserStatus, UpdateOwnStatus } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doUpdateOwnStatus } from "../actions/user-status";
import type { AccountsDeps } from "../deps";
import { getUserStatus } from "../queries/user-status";

export function userStatusRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, UpdateOwnStatus, async ({ identity, params }) => {
    await doUpdateOwnStatus(deps, identity, {
      statusText: params.status_text,
      emojiName: params.emoji_name,
      emojiCode: params.emoji_code,
      reactionType: params.reaction_type,
      away: params.away,
    });
    return {};
  });

  registerRoute(app, GetUserStatus, async ({ identity, params }) => ({ status: await getUserStatus(deps, identity, params.user_id) }));
}
