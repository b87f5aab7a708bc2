import { GetStreamById, GetStreamId, GetStreams, GetStreamTopics } from "@chat/contracts";
import { badRequest, registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { accessStreamById, canAccessHistory, getStreamById, getStreamId, getStreams, viewerOf } from "../queries/streams";
import { selectReceivedTopics, selectStreamTopics } from "../store/streams";

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
    // A private channel's topics are for its subscribers, administrators included (Zulip's
    // access_stream_by_id without the administrator exception).
    if (stream.inviteOnly && !sub?.active) throw badRequest("Invalid channel ID");
    // Protected history: the topics of the messages one received (sent after one joined).
    const topics = canAccessHistory(viewer, stream, sub)
      ? await selectStreamTopics(deps.pool, viewer.realmId, stream.id)
      : await selectReceivedTopics(deps.pool, viewer.realmId, viewer.userId, stream.id);
    return { topics: topics.map((t) => ({ name: t.name, max_id: t.maxId })) };
  });
};
