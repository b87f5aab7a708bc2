import { UpdateUserTopic } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doUpdateUserTopic } from "../actions/user-topics";

export const userTopicRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, UpdateUserTopic, async ({ params, identity }) => {
    await doUpdateUserTopic(deps, identity, params.stream_id, params.topic, params.visibility_policy);
    return {};
  });
};
