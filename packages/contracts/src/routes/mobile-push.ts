import { p } from "../params";
import { empty, route } from "../route";

/**
 * A test notification to the caller's registered devices, or only to the one whose push token
 * is `token` (humans only).
 */
export const SendTestPushNotification = route({
  method: "POST",
  path: "/mobile_push/test_notification",
  service: "accounts",
  auth: "user",
  params: { token: p.str() },
  response: empty,
});
