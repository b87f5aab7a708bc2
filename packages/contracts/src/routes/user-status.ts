import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/** A user's status as clients read it: only non-default fields are present. */
export const UserStatusObject = z.strictObject({
  away: z.boolean().optional(),
  status_text: z.string().optional(),
  emoji_name: z.string().optional(),
  emoji_code: z.string().optional(),
  reaction_type: z.string().optional(),
});

/** Spec 4.7: only the parameters passed change. */
export const UpdateOwnStatus = route({
  method: "POST",
  path: "/users/me/status",
  service: "accounts",
  auth: "user",
  params: {
    status_text: p.str(),
    emoji_name: p.str(),
    emoji_code: p.str(),
    reaction_type: p.str(),
    away: p.bool(),
  },
  response: empty,
});

export const GetUserStatus = route({
  method: "GET",
  path: "/users/{user_id}/status",
  service: "accounts",
  auth: "user",
  params: { user_id: p.int().path() },
  response: success({ status: UserStatusObject }),
});
