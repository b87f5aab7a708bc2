import { UpdateMutedTopic, UpdateUserTopic } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doUpdateMutedTopic, doUpdateUserTopic } from "../actions/user-topics";

export const userTopicRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, UpdateUserTopic, async ({ params, identity }) => {
    await doUpdateUserTopic(deps, identity, params.stream_id, params.topic, params.visibility_policy);
    return {};
  });

  registerRoute(app, UpdateMutedTopic, async ({ params, identity }) => {
    await doUpdateMutedTopic(deps, identity, { streamId: params.stream_id, streamName: params.stream, topic: params.topic, op: params.op as "add" | "remove" });
    return {};
  });
};
