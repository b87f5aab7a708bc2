import { GetStreamById, GetStreamId, GetStreams, GetStreamTopics } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { accessStreamById, canAccessHistory, getStreamById, getStreamId, getStreams, viewerOf } from "../queries/streams";
import { selectStreamTopics } from "../store/streams";

export const streamRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, GetStreams, async ({ params, identity }) => ({
    streams: await getStreams(deps, viewerOf(identity), {
      includePublic: params.include_public,
      includeWebPublic: params.include_web_public,
      includeSubscribed: params.include_subscribed,
      includeAllActive: params.include_all_active,
      includeDefault: params.include_default,
      includeOwnerSubscribed: params.include_owner_subscribed,
    }),
  }));

  registerRoute(app, GetStreamById, async ({ params, identity }) => ({ stream: await getStreamById(deps, viewerOf(identity), params.stream_id) }));

  registerRoute(app, GetStreamId, async ({ params, identity }) => ({ stream_id: await getStreamId(deps, viewerOf(identity), params.stream) }));

  registerRoute(app, GetStreamTopics, async ({ params, identity }) => {
    const viewer = viewerOf(identity);
    const { stream, sub } = await accessStreamById(deps.pool, viewer, params.stream_id);
    if (!canAccessHistory(viewer, stream, sub)) return { topics: [] };
    const topics = await selectStreamTopics(deps.pool, viewer.realmId, stream.id);
    return { topics: topics.map((t) => ({ name: t.name, max_id: t.maxId })) };
  });
};
