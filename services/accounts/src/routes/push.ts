import { AddApnsToken, AddGcmToken, RemoveApnsToken, RemoveGcmToken } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doAddPushToken, doRemovePushToken } from "../actions/push-tokens";
import type { AccountsDeps } from "../deps";
import { PUSH_KIND } from "../store/push-tokens";

export function pushRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, AddApnsToken, async ({ identity, params }) => {
    await doAddPushToken(deps, identity, PUSH_KIND.apns, params.token, params.appid);
    return {};
  });
  registerRoute(app, RemoveApnsToken, async ({ identity, params }) => {
    await doRemovePushToken(deps, identity, PUSH_KIND.apns, params.token);
    return {};
  });
  registerRoute(app, AddGcmToken, async ({ identity, params }) => {
    await doAddPushToken(deps, identity, PUSH_KIND.gcm, params.token, null);
    return {};
  });
  registerRoute(app, RemoveGcmToken, async ({ identity, params }) => {
    await doRemovePushToken(deps, identity, PUSH_KIND.gcm, params.token);
    return {};
  });
}
