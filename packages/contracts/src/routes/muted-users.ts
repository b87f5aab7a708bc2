import { p } from "../params";
import { empty, route } from "../route";

/** Mutes a user for the caller (Zulip's feature level 48; bots too since level 188). */
export const MuteUser = route({
  method: "POST",
  path: "/users/me/muted_users/{muted_user_id}",
  service: "accounts",
  auth: "user",
  params: { muted_user_id: p.int().path() },
  response: empty,
});

export const UnmuteUser = route({
  method: "DELETE",
  path: "/users/me/muted_users/{muted_user_id}",
  service: "accounts",
  auth: "user",
  params: { muted_user_id: p.int().path() },
  response: empty,
});
