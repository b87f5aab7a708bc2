import { z } from "zod";
import { maxChars, p } from "../params";
import { MAX_STREAM_DESCRIPTION_LENGTH } from "../version";
import { empty, route, success } from "../route";

/** 1 anyone, 2 administrators, 3 full members, 4 moderators; anything else is `Invalid stream_post_policy`, as in Zulip. */
export const StreamPostPolicy = z
  .number()
  .int()
  .refine((v) => v >= 1 && v <= 4, { message: "Invalid {name}" });

/**
 * A channel's message retention: `"realm_default"`, `"unlimited"` or a number of days. Any JSON
 * string or integer passes here; messaging refuses the rest as Zulip does (REQUEST_VARIABLE_INVALID,
 * `Bad value for 'message_retention_days': <value>`), strings such as `"forever"` included.
 */
export const MessageRetentionDays = z.union([z.string(), z.number().int()]);

/** A channel as every user who can see it gets it (GET /streams, register `streams`, stream events). */
export const StreamObject = z.strictObject({
  stream_id: z.number().int(),
  name: z.string(),
  description: z.string(),
  rendered_description: z.string(),
  date_created: z.number().int(),
  creator_id: z.number().int().nullable(),
  invite_only: z.boolean(),
  is_web_public: z.boolean(),
  stream_post_policy: z.number().int(),
  message_retention_days: z.number().int().nullable(),
  history_public_to_subscribers: z.boolean(),
  first_message_id: z.number().int().nullable(),
  is_announcement_only: z.boolean(),
  can_remove_subscribers_group: z.number().int(),
  stream_weekly_traffic: z.number().int().nullable(),
  /** Only with `include_default` on GET /streams. */
  is_default: z.boolean().optional(),
  /** Only in register's `never_subscribed` with `include_subscribers`. */
  subscribers: z.array(z.number().int()).optional(),
});
export type StreamObject = z.infer<typeof StreamObject>;

export const GetStreams = route({
  method: "GET",
  path: "/streams",
  service: "messaging",
  auth: "user",
  params: {
    include_public: p.bool().default(true),
    include_web_public: p.bool().default(false),
    include_subscribed: p.bool().default(true),
    include_all_active: p.bool().default(false),
    include_default: p.bool().default(false),
    include_owner_subscribed: p.bool().default(false),
  },
  // Subscriber lists come only with register's `include_subscribers`; Zulip's GET /streams has none.
  response: success({ streams: z.array(StreamObject.omit({ subscribers: true })) }),
});

export const GetStreamById = route({
  method: "GET",
  path: "/streams/{stream_id}",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().path() },
  // Zulip's BasicChannel: neither `is_default` (a GET /streams flag) nor subscriber lists.
  response: success({ stream: StreamObject.omit({ is_default: true, subscribers: true }) }),
});

/**
 * A channel's address for Zulip's email gateway (feature level 226), for whoever may access the
 * channel. This server has no email gateway, so the address is empty, as Zulip answers when its
 * EMAIL_GATEWAY_PATTERN is unset.
 */
export const GetStreamEmailAddress = route({
  method: "GET",
  path: "/streams/{stream_id}/email_address",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().path() },
  response: success({ email: z.string() }),
});

export const GetStreamId = route({
  method: "GET",
  path: "/get_stream_id",
  service: "messaging",
  auth: "user",
  params: { stream: p.str().required() },
  response: success({ stream_id: z.number().int() }),
});

export const GetStreamTopics = route({
  method: "GET",
  path: "/users/me/{stream_id}/topics",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().path() },
  response: success({ topics: z.array(z.strictObject({ name: z.string(), max_id: z.number().int() })) }),
});

export const GetStreamMembers = route({
  method: "GET",
  path: "/streams/{stream_id}/members",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().path() },
  response: success({ subscribers: z.array(z.number().int()) }),
});

/** Deletes (deactivates) a channel; administrators only. */
export const DeleteStream = route({
  method: "DELETE",
  path: "/streams/{stream_id}",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().path() },
  response: empty,
});

/** Makes a channel one of the organization's default channels (new users join them); administrators only. */
export const AddDefaultStream = route({
  method: "POST",
  path: "/default_streams",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().required() },
  response: empty,
});

export const RemoveDefaultStream = route({
  method: "DELETE",
  path: "/default_streams",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().required() },
  response: empty,
});

/** A group setting's new value: a group id, or `{new, old}` where `old` must be the current one. */
export const GroupSettingChange = z.union([z.number().int(), z.strictObject({ new: z.number().int(), old: z.number().int().optional() })]);

/** Changes a channel's name, description or settings; administrators only. */
export const UpdateStream = route({
  method: "PATCH",
  path: "/streams/{stream_id}",
  service: "messaging",
  auth: "user",
  params: {
    stream_id: p.int().path(),
    description: p.str(maxChars(MAX_STREAM_DESCRIPTION_LENGTH)),
    new_name: p.str(),
    is_private: p.bool(),
    is_announcement_only: p.bool(),
    is_web_public: p.bool(),
    history_public_to_subscribers: p.bool(),
    is_default_stream: p.bool(),
    stream_post_policy: p.int(StreamPostPolicy),
    message_retention_days: p.json(MessageRetentionDays),
    can_remove_subscribers_group: p.json(GroupSettingChange).alias("can_remove_subscribers_group_id"),
  },
  response: empty,
});

/**
 * Deletes a topic's messages, newest first, in batches; `complete` is false when the request ran
 * out of time first (the client repeats it). Administrators only.
 */
export const DeleteTopic = route({
  method: "POST",
  path: "/streams/{stream_id}/delete_topic",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().path(), topic_name: p.str().required() },
  response: success({ complete: z.boolean() }),
});

/**
 * The organization's channels (not deleted ones) whose group settings name one of these groups,
 * with the settings that do: a user group in use cannot be deactivated (Zulip's objections).
 */
export const InternalStreamGroupSettingUses = route({
  method: "GET",
  path: "/internal/streams/group_setting_uses",
  service: "messaging",
  auth: "internal",
  params: { realm_id: p.int().required(), group_ids: p.json(z.array(z.number().int())).required() },
  response: success({ channels: z.array(z.strictObject({ channel_id: z.number().int(), settings: z.array(z.string()) })) }),
});
