import { GetMessagesMatchNarrow } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { getMessagesMatchingNarrow } from "../queries/message-matches";

/** Questions about given messages: which match a narrow. */
export const messageQueryRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, GetMessagesMatchNarrow, async ({ params, identity }) => ({
    messages: await getMessagesMatchingNarrow(deps, identity, params.msg_ids, params.narrow),
  }));
};
