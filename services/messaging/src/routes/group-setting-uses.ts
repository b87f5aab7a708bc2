import { InternalStreamGroupSettingUses } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { selectStreamsUsingGroups } from "../store/streams";

/** For accounts, before it deactivates a user group: the channels whose settings still name it. */
export const groupSettingUseRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, InternalStreamGroupSettingUses, async ({ params }) => ({
    channels: (await selectStreamsUsingGroups(deps.pool, params.realm_id, params.group_ids)).map((s) => ({
      channel_id: s.id,
      settings: ["can_remove_subscribers_group"],
    })),
  }));
};
