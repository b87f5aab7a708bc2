import { p } from "../params";
import { empty, route } from "../route";

/** Push registration tokens (humans only). APNs tokens are hex; `appid` names the iOS app. */
export const AddApnsToken = route({
  method: "POST",
  path: "/users/me/apns_device_token",
  service: "accounts",
  auth: "user",
  params: { token: p.str().required(), appid: p.str().required() },
  response: empty,
});

export const RemoveApnsToken = route({
  method: "DELETE",
  path: "/users/me/apns_device_token",
  service: "accounts",
  auth: "user",
  params: { token: p.str().required() },
  response: empty,
});

export const AddGcmToken = route({
  method: "POST",
  path: "/users/me/android_gcm_reg_id",
  service: "accounts",
  auth: "user",
  params: { token: p.str().required() },
  response: empty,
});

/** Spec 4.18. */
export const RemoveGcmToken = route({
  method: "DELETE",
  path: "/users/me/android_gcm_reg_id",
  service: "accounts",
  auth: "user",
  params: { token: p.str().required() },
  response: empty,
});
