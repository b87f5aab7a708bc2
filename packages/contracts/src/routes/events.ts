import { z } from "zod";
import { ClientEvent } from "../events/client";
import { p } from "../params";
import { empty, route, success } from "../route";
import { RealmBot } from "./bots";

/**
 * The event queue: POST /register, GET /events, DELETE /events (served by the events service).
 * Queue parameters are shared by POST /register and by GET /events without `queue_id`.
 */

/** `[operator, operand]` or `{operator, operand, negated?}`; operators are checked by the service. */
export const QueueNarrowTerm = z.union([
  z.tuple([z.string(), z.string()]),
  z.looseObject({ operator: z.string(), operand: z.string(), negated: z.boolean().optional() }),
]);

/**
 * Register's `client_capabilities` (Zulip's `ClientCapabilities`): `notification_settings_null`
 * is required whenever the object is sent, the others are optional; keys Zulip does not define
 * are ignored (dropped here).
 */
export const ClientCapabilities = z.object({
  notification_settings_null: z.boolean(),
  bulk_message_deletion: z.boolean().optional(),
  user_avatar_url_field_optional: z.boolean().optional(),
  stream_typing_notifications: z.boolean().optional(),
  user_settings_object: z.boolean().optional(),
  linkifier_url_template: z.boolean().optional(),
  user_list_incomplete: z.boolean().optional(),
  include_deactivated_groups: z.boolean().optional(),
  archived_channels: z.boolean().optional(),
});

export const queueParams = {
  /** Event types the queue accepts; null (or absent) means all. Unknown names are ignored. */
  event_types: p.json(z.array(z.string()).nullable()).nullable(),
  narrow: p.json(z.array(QueueNarrowTerm)).default([]),
  all_public_streams: p.bool().default(false),
  client_capabilities: p.json(ClientCapabilities).default({ notification_settings_null: false }),
  apply_markdown: p.bool().default(false),
  client_gravatar: p.bool().default(true),
  /** `presence` events without the deprecated `email` (and register's presences by user id). */
  slim_presence: p.bool().default(false),
  /**
   * Idle lifetime of the queue; 0 means the server default (600 s); capped at 7 days. A negative
   * one is accepted, as Zulip accepts it: the queue expires at the next sweep no poll waits through.
   */
  queue_lifespan_secs: p.int(z.number().int()).default(0).alias("lifespan_secs"),
};

/** Keys of Zulip's register response (feature levels up to 330) that state services may return. */
const REGISTER_STATE_KEYS = [
  "alert_words", "custom_profile_fields", "custom_profile_field_types", "demo_organization_scheduled_deletion_date",
  "drafts", "onboarding_steps", "max_message_id", "max_stream_name_length", "max_stream_description_length",
  "server_presence_ping_interval_seconds", "server_presence_offline_threshold_seconds",
  "server_typing_started_expiry_period_milliseconds", "server_typing_stopped_wait_period_milliseconds",
  "server_typing_started_wait_period_milliseconds", "scheduled_messages", "muted_topics", "muted_users", "presences",
  "presence_last_update_id", "server_timestamp", "recent_private_conversations", "saved_snippets", "subscriptions",
  "unsubscribed", "never_subscribed", "unread_msgs", "starred_messages", "streams", "stop_words", "user_status",
  "user_settings", "user_topics", "has_zoom_token", "giphy_api_key", "realm_domains", "realm_embedded_bots",
  "realm_incoming_webhook_bots", "enable_desktop_notifications",
  "enable_digest_emails", "enable_login_emails", "enable_marketing_emails", "email_notifications_batching_period_seconds",
  "enable_offline_email_notifications", "enable_offline_push_notifications", "enable_online_push_notifications",
  "enable_sounds", "enable_stream_desktop_notifications", "enable_stream_email_notifications",
  "enable_stream_push_notifications", "enable_stream_audible_notifications", "wildcard_mentions_notify",
  "message_content_in_email_notifications", "notification_sound", "pm_content_in_desktop_notifications",
  "desktop_icon_count_display", "presence_enabled", "available_notification_sounds", "color_scheme",
  "default_language", "demote_inactive_streams", "dense_mode", "emojiset", "enable_drafts_synchronization",
  "fluid_layout_width", "web_home_view", "high_contrast_mode", "left_side_userlist", "starred_message_counts",
  "timezone", "translate_emoticons", "twenty_four_hour_time", "receives_typing_notifications",
  "web_suggest_update_timezone", "enter_sends", "emojiset_choices", "max_icon_file_size_mib", "max_logo_file_size_mib",
  "settings_send_digest_emails", "zulip_plan_is_not_limited", "upgrade_text_for_wide_organization_logo",
  "jitsi_server_url", "development_environment", "server_generation", "password_min_length", "password_min_guesses",
  "giphy_rating_options", "max_file_upload_size_mib", "max_avatar_file_size_mib", "server_inline_image_preview",
  "server_inline_url_embed_preview", "server_thumbnail_formats", "server_avatar_changes_disabled",
  "server_name_changes_disabled", "server_needs_upgrade", "server_web_public_streams_enabled", "server_emoji_data_url",
  "server_jitsi_server_url", "server_supported_permission_settings", "avatar_source", "avatar_url_medium",
  "avatar_url", "can_create_streams", "can_create_public_streams", "can_create_private_streams",
  "can_create_web_public_streams", "can_subscribe_other_users", "can_invite_others_to_realm", "is_admin", "is_owner",
  "is_billing_admin", "is_moderator", "is_guest", "user_id", "email", "delivery_email", "full_name",
  "cross_realm_bots",
] as const;

/**
 * POST /register's body: the queue keys this service owns, plus the state other services return.
 * State keys are validated by their owners; here only their names are checked (Zulip's list,
 * plus any `realm_*` setting, whose set varies by feature level), so a misspelt key still fails.
 */
export const RegisterResponse = success({
  queue_id: z.string().nullable(),
  last_event_id: z.number().int(),
  zulip_version: z.string(),
  zulip_feature_level: z.number().int(),
  zulip_merge_base: z.string(),
  max_message_length: z.number().int(),
  max_topic_length: z.number().int(),
  event_queue_longpoll_timeout_seconds: z.number().int(),
  ...Object.fromEntries(REGISTER_STATE_KEYS.map((k) => [k, z.unknown().optional()])),
  /** With realm_bot fetched: the bots the user administers (an administrator all the organization's). */
  realm_bots: z.array(RealmBot).optional(),
}).catchall(z.unknown()).superRefine((body, ctx) => {
  const known = new Set<string>([...REGISTER_STATE_KEYS, "queue_id", "last_event_id", "zulip_version",
    "zulip_feature_level", "zulip_merge_base", "max_message_length", "max_topic_length",
    "event_queue_longpoll_timeout_seconds"]);
  for (const key of Object.keys(body)) {
    if (!known.has(key) && !key.startsWith("realm_")) {
      ctx.addIssue({ code: "custom", path: [key], message: `Unexpected register key "${key}"` });
    }
  }
});

export const Register = route({
  method: "POST",
  path: "/register",
  service: "events",
  auth: "user",
  params: {
    ...queueParams,
    /** State to return; defaults to `event_types`; null means all. */
    fetch_event_types: p.json(z.array(z.string()).nullable()).nullable(),
    include_subscribers: p.bool().default(false),
    /** How far back register's presences go; unset means 14 days. */
    presence_history_limit_days: p.int(),
  },
  response: RegisterResponse,
  summary: "Register an event queue and fetch the initial state",
});

export const GetEvents = route({
  method: "GET",
  path: "/events",
  service: "events",
  auth: "user",
  params: {
    queue_id: p.str(),
    /** Acknowledges (and drops) every event up to this id. Optional in our spec. */
    last_event_id: p.int(),
    dont_block: p.bool().default(false),
    ...queueParams,
    /** Register's parameter (spec 4.4: register's parameters may be passed here), for the queue made without `queue_id`. */
    include_subscribers: p.bool().default(false),
  },
  response: success({ events: z.array(ClientEvent), queue_id: z.string() }),
  longPoll: true,
  summary: "Long-poll an event queue",
});

export const DeleteQueue = route({
  method: "DELETE",
  path: "/events",
  service: "events",
  auth: "user",
  params: { queue_id: p.str().required() },
  response: empty,
  summary: "Release any waiting poll and delete the queue",
});
