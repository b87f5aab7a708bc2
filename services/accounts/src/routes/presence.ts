import { GetRealmPresence, GetUserPresence, UpdatePresence } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doUpdateUserPresence } from "../actions/presence";
import type { AccountsDeps } from "../deps";
import { getOneUserPresence, getRealmPresences } from "../queries/presence";

export function presenceRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, UpdatePresence, async ({ identity, params }) => {
    // new_user_input feeds Zulip's usage statistics, which we do not keep.
    await doUpdateUserPresence(deps, identity, params.status);
    if (params.ping_only) return {};
    return getRealmPresences(deps, identity, {
      // Passing last_update_id is asking for the modern protocol.
      slim: params.slim_presence || params.last_update_id !== undefined,
      lastUpdateId: params.last_update_id,
      historyLimitDays: params.history_limit_days,
    });
  });

  registerRoute(app, GetRealmPresence, async ({ identity }) => {
    const { presences, server_timestamp } = await getRealmPresences(deps, identity, { slim: false });
    return { presences, server_timestamp };
  });

  registerRoute(app, GetUserPresence, ({ identity, params }) => getOneUserPresence(deps, identity, params.user_id_or_email));
}
