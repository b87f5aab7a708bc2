import { UpdateMessageFlags } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doUpdateMessageFlags } from "../actions/flags";

export const flagRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, UpdateMessageFlags, async ({ params, identity }) => ({
    messages: await doUpdateMessageFlags(deps, identity, params.messages, params.op, params.flag),
  }));
};
