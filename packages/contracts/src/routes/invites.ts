import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/** An invitation as GET /invites lists it (email invitations; times in Unix seconds). */
export const Invite = z.strictObject({
  id: z.number().int(),
  invited_by_user_id: z.number().int(),
  invited: z.number().int(),
  expiry_date: z.number().int().nullable(),
  invited_as: z.number().int(),
  email: z.string(),
  notify_referrer_on_join: z.boolean(),
  is_multiuse: z.boolean(),
});

/** Spec 4.6. */
export const SendInvites = route({
  method: "POST",
  path: "/invites",
  service: "accounts",
  auth: "user",
  params: {
    invitee_emails: p.str().required(),
    invite_expires_in_minutes: p.int().nullable(),
    invite_as: p.int().default(400),
    stream_ids: p.json(z.array(z.number().int())).required(),
    include_realm_default_subscriptions: p.bool().default(false),
    notify_referrer_on_join: p.bool().default(true),
  },
  response: empty,
});

export const GetInvites = route({
  method: "GET",
  path: "/invites",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({ invites: z.array(Invite) }),
});

export const RevokeInvite = route({
  method: "DELETE",
  path: "/invites/{invite_id}",
  service: "accounts",
  auth: "user",
  params: { invite_id: p.int().path() },
  response: empty,
});
