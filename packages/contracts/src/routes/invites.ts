import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/**
 * An invitation as GET /invites lists it (times in Unix seconds): an email invitation has
 * `email` and `notify_referrer_on_join`, a reusable link `link_url` instead. Ids are unique per
 * kind only (Zulip keeps them in two tables).
 */
export const Invite = z.strictObject({
  id: z.number().int(),
  invited_by_user_id: z.number().int(),
  invited: z.number().int(),
  expiry_date: z.number().int().nullable(),
  invited_as: z.number().int(),
  email: z.string().optional(),
  notify_referrer_on_join: z.boolean().optional(),
  link_url: z.string().optional(),
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

/** Resends an email invitation: a new link, valid as long again as the first one was. */
export const ResendInvite = route({
  method: "POST",
  path: "/invites/{invite_id}/resend",
  service: "accounts",
  auth: "user",
  params: { invite_id: p.int().path() },
  response: empty,
});

/** A reusable invitation link (Zulip's create-invite-link). */
export const CreateMultiuseInvite = route({
  method: "POST",
  path: "/invites/multiuse",
  service: "accounts",
  auth: "user",
  params: {
    invite_expires_in_minutes: p.int().nullable(),
    invite_as: p.int().default(400),
    stream_ids: p.json(z.array(z.number().int())).default([]),
    include_realm_default_subscriptions: p.bool().default(false),
  },
  response: success({ invite_link: z.string() }),
});

export const RevokeMultiuseInvite = route({
  method: "DELETE",
  path: "/invites/multiuse/{invite_id}",
  service: "accounts",
  auth: "user",
  params: { invite_id: p.int().path() },
  response: empty,
});

/**
 * Signs a new user up through a reusable invitation link (the key of its `/join/{key}/` URL), as
 * often as it is used until it expires or is revoked: the same account creation as
 * /internal/invites/accept, with the link's role and channels.
 */
export const InternalAcceptMultiuseInvite = route({
  method: "POST",
  path: "/internal/invites/multiuse/accept",
  service: "accounts",
  auth: "internal",
  params: {
    realm_id: p.int().required(),
    key: p.str().required(),
    email: p.str().required(),
    full_name: p.str().required(),
    password: p.str(),
  },
  response: success({ user_id: z.number().int(), email: z.string(), api_key: z.string(), role: z.number().int() }),
});
