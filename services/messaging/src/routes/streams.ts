import { AddDefaultStream, DeleteStream, DeleteTopic, GetStreamById, GetStreamEmailAddress, GetStreamId, GetStreamMembers, GetStreams, GetStreamTopics, RemoveDefaultStream, UpdateStream } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doAddDefaultStream, doRemoveDefaultStream } from "../actions/default-streams";
import { doUpdateStream } from "../actions/stream-settings";
import { doDeactivateStream } from "../actions/streams";
import { doDeleteTopic } from "../actions/topics";
import { getStreamById, getStreamEmailAddress, getStreamId, getStreamMembers, getStreams, getStreamTopics, viewerOf } from "../queries/streams";

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

  registerRoute(app, GetStreamEmailAddress, async ({ params, identity }) => ({ email: await getStreamEmailAddress(deps, viewerOf(identity), params.stream_id) }));

  registerRoute(app, GetStreamMembers, async ({ params, identity }) => ({ subscribers: await getStreamMembers(deps, viewerOf(identity), params.stream_id) }));

  registerRoute(app, GetStreamId, async ({ params, identity }) => ({ stream_id: await getStreamId(deps, viewerOf(identity), params.stream) }));

  registerRoute(app, GetStreamTopics, async ({ params, identity }) => ({ topics: await getStreamTopics(deps, viewerOf(identity), params.stream_id) }));

  registerRoute(app, DeleteStream, async ({ params, identity }) => {
    await doDeactivateStream(deps, identity, params.stream_id);
    return {};
  });

  registerRoute(app, AddDefaultStream, async ({ params, identity }) => {
    await doAddDefaultStream(deps, identity, params.stream_id);
    return {};
  });

  registerRoute(app, RemoveDefaultStream, async ({ params, identity }) => {
    await doRemoveDefaultStream(deps, identity, params.stream_id);
    return {};
  });

  registerRoute(app, UpdateStream, async ({ params, identity }) => {
    await doUpdateStream(deps, identity, params.stream_id, {
      description: params.description,
      newName: params.new_name,
      isPrivate: params.is_private,
      isAnnouncementOnly: params.is_announcement_only,
      isWebPublic: params.is_web_public,
      historyPublicToSubscribers: params.history_public_to_subscribers,
      isDefaultStream: params.is_default_stream,
      streamPostPolicy: params.stream_post_policy,
      messageRetentionDays: params.message_retention_days,
      canRemoveSubscribersGroup: params.can_remove_subscribers_group,
    });
    return {};
  });

  registerRoute(app, DeleteTopic, async ({ params, identity }) => ({ complete: await doDeleteTopic(deps, identity, params.stream_id, params.topic_name) }));
};
