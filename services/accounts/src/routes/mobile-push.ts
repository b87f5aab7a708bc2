import { SendTestPushNotification } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doSendTestPushNotification } from "../actions/mobile-push";
import type { AccountsDeps } from "../deps";

export function mobilePushRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, SendTestPushNotification, async ({ identity, params }) => {
    await doSendTestPushNotification(deps, identity, params.token);
    return {};
  });
}
