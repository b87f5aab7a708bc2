import { z } from "zod";
import { maxChars, p } from "../params";
import { empty, route, success } from "../route";
import { ProfileDataUpdate } from "./custom-profile-fields";

/**
 * Administrators edit another user: full name, role (owners only to or from owner; never the
 * last owner) and custom profile field values. The billing role is not set here (Zulip has no
 * such API parameter): see InternalSetBillingAdmin.
 */
export const UpdateUser = route({
  method: "PATCH",
  path: "/users/{user_id}",
  service: "accounts",
  auth: "user",
  params: {
    user_id: p.int().path(),
    full_name: p.str(),
    role: p.int(),
    profile_data: p.json(z.array(ProfileDataUpdate)),
  },
  response: empty,
});

/** Administrators deactivate another user (and the bots they own). */
export const DeactivateUser = route({
  method: "DELETE",
  path: "/users/{user_id}",
  service: "accounts",
  auth: "user",
  params: {
    user_id: p.int().path(),
    /** When given (even empty), the user is mailed that the account was deactivated, with this comment. */
    deactivation_notification_comment: p.str(maxChars(2000)),
  },
  response: empty,
});

export const ReactivateUser = route({
  method: "POST",
  path: "/users/{user_id}/reactivate",
  service: "accounts",
  auth: "user",
  params: { user_id: p.int().path() },
  response: empty,
});

/** Multipart, exactly one image part (any field name). */
export const UploadOwnAvatar = route({
  method: "POST",
  path: "/users/me/avatar",
  service: "accounts",
  auth: "user",
  upload: true,
  params: {},
  response: success({ avatar_url: z.string() }),
});

/** Back to the Gravatar image. */
export const DeleteOwnAvatar = route({
  method: "DELETE",
  path: "/users/me/avatar",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({ avatar_url: z.string() }),
});

/**
 * An uploaded avatar image (not JSON). Public like Zulip's avatar URLs: the file name carries
 * a random token, so it cannot be guessed from the user id.
 */
export const GetAvatarImage = route({
  method: "GET",
  path: "/user_avatars/{realm_id_str}/{filename}",
  service: "accounts",
  auth: "none",
  params: { realm_id_str: p.str().path(), filename: p.str().path() },
  response: z.any(),
});
