import { ApiError, type Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { countUserTokens } from "../store/push-tokens";
import { checkHuman } from "./push-tokens";

/**
 * POST /mobile_push/test_notification (Zulip's send_test_push_notification_api): a `token` must
 * be one of the caller's registered devices ("Device not recognized"), checked first as Zulip
 * does. This server sends no push notifications itself; without a configured push service
 * (PUSH_NOTIFICATIONS_ENABLED) it says so rather than answering a success that reaches nobody.
 */
export async function doSendTestPushNotification(deps: AccountsDeps, who: Identity, token: string | undefined): Promise<void> {
  checkHuman(who);
  const devices = await countUserTokens(deps.pool, who.realmId, who.userId, token ?? null);
  if (token !== undefined && devices === 0) throw new ApiError("INVALID_PUSH_DEVICE_TOKEN", "Device not recognized");
  if (!deps.config.PUSH_NOTIFICATIONS_ENABLED) {
    throw new ApiError("PUSH_SERVICE_NOT_CONFIGURED", "Server is not configured to use push notification service.");
  }
  // Delivery belongs to the configured push service; nothing in this process talks to one yet.
  deps.log.info({ userId: who.userId, devices }, "test push notification requested");
}
