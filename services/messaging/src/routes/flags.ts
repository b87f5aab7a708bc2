import { MarkAllAsRead, MarkStreamAsRead, MarkTopicAsRead, UpdateMessageFlags, UpdateMessageFlagsForNarrow } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doUpdateMessageFlags, doUpdateMessageFlagsForNarrow } from "../actions/flags";
import { doMarkAsRead, doMarkStreamAsRead } from "../actions/mark-read";

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

  // Done in one statement, so always complete (Zulip may stop a batched run early).
  registerRoute(app, MarkAllAsRead, async ({ identity }) => {
    await doMarkAsRead(deps, identity, {});
    return { complete: true };
  });

  registerRoute(app, MarkStreamAsRead, async ({ params, identity }) => {
    await doMarkStreamAsRead(deps, identity, params.stream_id);
    return {};
  });

  registerRoute(app, MarkTopicAsRead, async ({ params, identity }) => {
    await doMarkStreamAsRead(deps, identity, params.stream_id, params.topic_name);
    return {};
  });
};
