import { GetMessagesMatchNarrow, GetReadReceipts } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { getMessagesMatchingNarrow } from "../queries/message-matches";
import { getReadReceipts } from "../queries/read-receipts";

/** Questions about given messages: which match a narrow, who read one. */
export const messageQueryRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, GetMessagesMatchNarrow, async ({ params, identity }) => ({
    messages: await getMessagesMatchingNarrow(deps, identity, params.msg_ids, params.narrow),
  }));

  registerRoute(app, GetReadReceipts, async ({ params, identity }) => ({
    user_ids: await getReadReceipts(deps, identity, params.message_id),
  }));
};
