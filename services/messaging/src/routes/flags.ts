import { UpdateMessageFlags, UpdateMessageFlagsForNarrow } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doUpdateMessageFlags, doUpdateMessageFlagsForNarrow } from "../actions/flags";

export const flagRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, UpdateMessageFlags, async ({ params, identity }) => ({
    messages: await doUpdateMessageFlags(deps, identity, params.messages, params.op, params.flag),
  }));

  registerRoute(app, UpdateMessageFlagsForNarrow, ({ params, identity }) =>
    doUpdateMessageFlagsForNarrow(deps, identity, {
      anchor: params.anchor,
      includeAnchor: params.include_anchor,
      numBefore: params.num_before,
      numAfter: params.num_after,
      narrow: params.narrow,
      op: params.op,
      flag: params.flag,
    }),
  );
};
