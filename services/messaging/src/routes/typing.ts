import { SetTypingStatus } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doSendTypingNotification, type TypingRequest } from "../actions/typing";

export const typingRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, SetTypingStatus, async ({ params, identity }) => {
    await doSendTypingNotification(deps, identity, {
      // The contract's enums checked both; p.str types them as plain strings.
      type: params.type as TypingRequest["type"],
      op: params.op as TypingRequest["op"],
      to: params.to,
      streamId: params.stream_id,
      topic: params.topic,
    });
    return {};
  });
};
