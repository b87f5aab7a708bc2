import { MuteUser, UnmuteUser } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doMuteUser, doUnmuteUser } from "../actions/muted-users";
import type { AccountsDeps } from "../deps";

export function mutedUserRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, MuteUser, async ({ identity, params }) => {
    await doMuteUser(deps, identity, params.muted_user_id);
    return {};
  });
  registerRoute(app, UnmuteUser, async ({ identity, params }) => {
    await doUnmuteUser(deps, identity, params.muted_user_id);
    return {};
  });
}
