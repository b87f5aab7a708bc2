import {
  GetSubscriptions,
  GetSubscriptionStatus,
  InternalConversationPartners,
  InternalSubscribeNewUser,
  Subscribe,
  Unsubscribe,
  UpdateSubscriptionProperties,
  UpdateSubscriptionProperty,
  UpdateSubscriptions,
  type ParsedParams,
} from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doUpdateSubscriptionProperties, doUpdateSubscriptionProperty } from "../actions/subscription-properties";
import { doAddSubscriptions, doRemoveSubscriptions, doSubscribeNewUser, type SubscribeRequest } from "../actions/subscriptions";
import { doUpdateSubscriptions } from "../actions/subscriptions-update";
import { getSubscriptionStatus, viewerOf } from "../queries/streams";
import { getSubscriptions } from "../queries/subscriptions";
import { getConversationPartners } from "../queries/user-access";

/** POST /users/me/subscriptions' parameters as the action takes them. */
export function subscribeRequest(params: ParsedParams<typeof Subscribe.params>): SubscribeRequest {
  return {
    streams: params.subscriptions,
    principals: params.principals,
    authorizationErrorsFatal: params.authorization_errors_fatal,
    inviteOnly: params.invite_only,
    isWebPublic: params.is_web_public,
    isDefaultStream: params.is_default_stream,
    historyPublicToSubscribers: params.history_public_to_subscribers,
    streamPostPolicy: params.stream_post_policy,
    messageRetentionDays: params.message_retention_days,
    canRemoveSubscribersGroup: params.can_remove_subscribers_group,
    announce: params.announce,
  };
}

export const subscriptionRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, GetSubscriptions, async ({ params, identity }) => ({
    subscriptions: await getSubscriptions(deps, viewerOf(identity), params.include_subscribers),
  }));

  registerRoute(app, GetSubscriptionStatus, async ({ params, identity }) => ({
    is_subscribed: await getSubscriptionStatus(deps, viewerOf(identity), params.user_id, params.stream_id),
  }));

  registerRoute(app, Subscribe, ({ params, identity }) => doAddSubscriptions(deps, identity, subscribeRequest(params)));

  registerRoute(app, Unsubscribe, ({ params, identity }) => doRemoveSubscriptions(deps, identity, params.subscriptions, params.principals));

  registerRoute(app, UpdateSubscriptions, ({ params, identity }) => doUpdateSubscriptions(deps, identity, params.add, params.delete));

  registerRoute(app, InternalSubscribeNewUser, async ({ params }) => ({
    stream_ids: await doSubscribeNewUser(deps, params.realm_id, params.user_id, params.stream_ids, params.include_default),
  }));

  registerRoute(app, InternalConversationPartners, async ({ params }) => ({
    user_ids: await getConversationPartners(deps.pool, params.realm_id, params.user_id),
  }));

  registerRoute(app, UpdateSubscriptionProperties, async ({ params, identity }) => {
    await doUpdateSubscriptionProperties(deps, identity, params.subscription_data);
    return {};
  });

  registerRoute(app, UpdateSubscriptionProperty, async ({ params, identity }) => {
    await doUpdateSubscriptionProperty(deps, identity, params.stream_id, params.property, params.value);
    return {};
  });
};
