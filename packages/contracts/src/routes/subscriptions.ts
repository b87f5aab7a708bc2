import { z } from "zod";
import { p } from "../params";
import { route, success, empty } from "../route";
import { MessageRetentionDays, StreamPostPolicy } from "./streams";

/** Spec 2.5: a channel plus the calling user's own settings for it. */
export const SubscriptionObject = z.strictObject({
  stream_id: z.number().int(),
  name: z.string(),
  description: z.string(),
  rendered_description: z.string(),
  date_created: z.number().int(),
  creator_id: z.number().int().nullable(),
  invite_only: z.boolean(),
  subscribers: z.array(z.number().int()).optional(),
  desktop_notifications: z.boolean().nullable(),
  email_notifications: z.boolean().nullable(),
  wildcard_mentions_notify: z.boolean().nullable(),
  push_notifications: z.boolean().nullable(),
  audible_notifications: z.boolean().nullable(),
  pin_to_top: z.boolean(),
  is_muted: z.boolean(),
  in_home_view: z.boolean(),
  is_announcement_only: z.boolean(),
  is_web_public: z.boolean(),
  color: z.string(),
  stream_post_policy: z.number().int(),
  message_retention_days: z.number().int().nullable(),
  history_public_to_subscribers: z.boolean(),
  first_message_id: z.number().int().nullable(),
  stream_weekly_traffic: z.number().int().nullable(),
  can_remove_subscribers_group: z.number().int(),
});
export type SubscriptionObject = z.infer<typeof SubscriptionObject>;

/** A user id (preferred) or an API email. */
const Principals = z.union([z.array(z.number().int()), z.array(z.string())]);

const NewStream = z.object({ name: z.string(), description: z.string().optional() });

/** Keys are user ids as strings; values are channel names. */
const UserToNames = z.record(z.string(), z.array(z.string()));

export const GetSubscriptions = route({
  method: "GET",
  path: "/users/me/subscriptions",
  service: "messaging",
  auth: "user",
  params: { include_subscribers: p.bool().default(false) },
  response: success({ subscriptions: z.array(SubscriptionObject) }),
});

export const Subscribe = route({
  method: "POST",
  path: "/users/me/subscriptions",
  service: "messaging",
  auth: "user",
  params: {
    subscriptions: p.json(z.array(NewStream)).required(),
    principals: p.json(Principals),
    authorization_errors_fatal: p.bool().default(true),
    announce: p.bool().default(false),
    invite_only: p.bool().default(false),
    is_web_public: p.bool().default(false),
    is_default_stream: p.bool().default(false),
    history_public_to_subscribers: p.bool(),
    stream_post_policy: p.int(StreamPostPolicy).default(1),
    message_retention_days: p.json(MessageRetentionDays).default("realm_default"),
    can_remove_subscribers_group: p.int().alias("can_remove_subscribers_group_id"),
  },
  response: success({
    subscribed: UserToNames,
    already_subscribed: UserToNames,
    unauthorized: z.array(z.string()).optional(),
  }),
});

export const Unsubscribe = route({
  method: "DELETE",
  path: "/users/me/subscriptions",
  service: "messaging",
  auth: "user",
  params: {
    subscriptions: p.json(z.array(z.string())).required(),
    principals: p.json(Principals),
  },
  response: success({ removed: z.array(z.string()), not_removed: z.array(z.string()) }),
});

export const SUBSCRIPTION_PROPERTIES = [
  "color",
  "is_muted",
  "in_home_view",
  "pin_to_top",
  "desktop_notifications",
  "audible_notifications",
  "push_notifications",
  "email_notifications",
  "wildcard_mentions_notify",
] as const;
export type SubscriptionProperty = (typeof SUBSCRIPTION_PROPERTIES)[number];

export const SubscriptionPropertyChange = z.object({
  stream_id: z.number().int(),
  property: z.string(),
  value: z.union([z.boolean(), z.string(), z.number()]),
});

export const UpdateSubscriptionProperties = route({
  method: "POST",
  path: "/users/me/subscriptions/properties",
  service: "messaging",
  auth: "user",
  params: { subscription_data: p.json(z.array(SubscriptionPropertyChange)).required() },
  response: empty,
});

/**
 * Subscribes a user who just accepted an invitation to the invitation's channels that still
 * exist, as Zulip does at sign-up: nobody acts, the inviter's right to those channels was
 * checked when inviting. Idempotent (accounts' consumer may retry). Returns the channel ids the
 * user is now subscribed to among those asked (and the default ones, with `include_default`).
 */
export const InternalSubscribeNewUser = route({
  method: "POST",
  path: "/internal/subscriptions/new_user",
  service: "messaging",
  auth: "internal",
  params: {
    realm_id: p.int().required(),
    user_id: p.int().required(),
    stream_ids: p.json(z.array(z.number().int())).required(),
    /** Also the organization's default channels (invitations' include_realm_default_subscriptions, new accounts). */
    include_default: p.bool().default(false),
  },
  response: success({ stream_ids: z.array(z.number().int()) }),
});

export const GetSubscriptionStatus = route({
  method: "GET",
  path: "/users/{user_id}/subscriptions/{stream_id}",
  service: "messaging",
  auth: "user",
  params: { user_id: p.int().path(), stream_id: p.int().path() },
  response: success({ is_subscribed: z.boolean() }),
});

/** A channel to join in PATCH /users/me/subscriptions: a new one gets the description, a new subscription the color. */
const AddedStream = z.object({ name: z.string(), color: z.string().optional(), description: z.string().optional() });

/** Joins and leaves channels in one request, answering as POST and DELETE would together. */
export const UpdateSubscriptions = route({
  method: "PATCH",
  path: "/users/me/subscriptions",
  service: "messaging",
  auth: "user",
  params: {
    add: p.json(z.array(AddedStream)).default([]),
    delete: p.json(z.array(z.string())).default([]),
  },
  response: success({
    subscribed: UserToNames,
    already_subscribed: UserToNames,
    removed: z.array(z.string()),
    not_removed: z.array(z.string()),
  }),
});

/**
 * The older form of POST /users/me/subscriptions/properties for one property of one channel
 * (still routed by Zulip, left out of its documentation): `value` is a JSON boolean or a raw string.
 */
export const UpdateSubscriptionProperty = route({
  method: "PATCH",
  path: "/users/me/subscriptions/{stream_id}",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().path(), property: p.str().required(), value: p.str().required() },
  response: empty,
});

/**
 * For accounts' limited user access (the organization's can_access_all_users_group): the users
 * who share an active channel subscription or a direct message conversation with `user_id`,
 * whom a guest in such an organization can access (bots aside, which accounts adds).
 */
export const InternalConversationPartners = route({
  method: "GET",
  path: "/internal/subscriptions/conversation_partners",
  service: "messaging",
  auth: "internal",
  params: { realm_id: p.int().required(), user_id: p.int().required() },
  response: success({ user_ids: z.array(z.number().int()) }),
});
