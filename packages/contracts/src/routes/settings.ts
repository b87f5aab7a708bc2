import { z } from "zod";
import { p } from "../params";
import { empty, route } from "../route";

/** An integer that must be one of Zulip's enum values; anything else is `Invalid <name>`. */
const intIn = (...allowed: number[]) =>
  p.int(z.number().int().refine((v) => allowed.includes(v), { message: "Invalid {name}" }));
const strIn = (...allowed: string[]) => p.str(z.string().refine((v) => allowed.includes(v), { message: "Invalid {name}" }));

/**
 * The personal settings both PATCH /settings and PATCH /realm/user_settings_defaults accept,
 * with Zulip's enums. Finer rules (known language, notification sound, batching period) are the
 * accounts service's, so their error texts match Zulip's.
 */
export const personalSettingParams = {
  twenty_four_hour_time: p.bool(),
  dense_mode: p.bool(),
  web_mark_read_on_scroll_policy: intIn(1, 2, 3),
  web_channel_default_view: intIn(1, 2),
  starred_message_counts: p.bool(),
  receives_typing_notifications: p.bool(),
  fluid_layout_width: p.bool(),
  high_contrast_mode: p.bool(),
  web_font_size_px: p.int(),
  web_line_height_percent: p.int(),
  color_scheme: intIn(1, 2, 3),
  enable_drafts_synchronization: p.bool(),
  translate_emoticons: p.bool(),
  display_emoji_reaction_users: p.bool(),
  web_home_view: strIn("recent_topics", "inbox", "all_messages"),
  web_escape_navigates_to_home_view: p.bool(),
  left_side_userlist: p.bool(),
  emojiset: strIn("google", "google-blob", "twitter", "text"),
  demote_inactive_streams: intIn(1, 2, 3),
  user_list_style: intIn(1, 2, 3),
  web_animate_image_previews: strIn("always", "on_hover", "never"),
  web_stream_unreads_count_display_policy: intIn(1, 2, 3),
  enable_stream_desktop_notifications: p.bool(),
  enable_stream_email_notifications: p.bool(),
  enable_stream_push_notifications: p.bool(),
  enable_stream_audible_notifications: p.bool(),
  notification_sound: p.str(),
  enable_desktop_notifications: p.bool(),
  enable_sounds: p.bool(),
  email_notifications_batching_period_seconds: p.int(),
  enable_offline_email_notifications: p.bool(),
  enable_offline_push_notifications: p.bool(),
  enable_online_push_notifications: p.bool(),
  enable_followed_topic_desktop_notifications: p.bool(),
  enable_followed_topic_email_notifications: p.bool(),
  enable_followed_topic_push_notifications: p.bool(),
  enable_followed_topic_audible_notifications: p.bool(),
  enable_followed_topic_wildcard_mentions_notify: p.bool(),
  enable_digest_emails: p.bool(),
  message_content_in_email_notifications: p.bool(),
  pm_content_in_desktop_notifications: p.bool(),
  wildcard_mentions_notify: p.bool(),
  desktop_icon_count_display: intIn(1, 2, 3, 4),
  realm_name_in_email_notifications_policy: intIn(1, 2, 3),
  automatically_follow_topics_policy: intIn(1, 2, 3, 4),
  automatically_unmute_topics_in_muted_streams_policy: intIn(1, 2, 3, 4),
  automatically_follow_topics_where_mentioned: p.bool(),
  presence_enabled: p.bool(),
  enter_sends: p.bool(),
  send_private_typing_notifications: p.bool(),
  send_stream_typing_notifications: p.bool(),
  send_read_receipts: p.bool(),
  /** 1 everyone, 2 members, 3 administrators, 4 nobody, 5 moderators. */
  email_address_visibility: intIn(1, 2, 3, 4, 5),
  web_navigate_to_sent_message: p.bool(),
};

/** Settings only a user sets for themselves (no organization default exists for them). */
export const ownOnlySettingParams = {
  default_language: p.str(),
  timezone: p.str(),
  enable_marketing_emails: p.bool(),
  enable_login_emails: p.bool(),
  allow_private_data_export: p.bool(),
};

/**
 * PATCH /settings: the caller's own settings, full name and password. Each changed setting
 * emits `user_settings` (plus the legacy display/notification event where Zulip had one).
 */
export const UpdateSettings = route({
  method: "PATCH",
  path: "/settings",
  service: "accounts",
  auth: "user",
  params: {
    full_name: p.str(),
    old_password: p.str(),
    new_password: p.str(),
    ...personalSettingParams,
    ...ownOnlySettingParams,
  },
  response: empty,
});

/** Administrators change the settings new users of the organization start with. */
export const UpdateRealmUserSettingsDefaults = route({
  method: "PATCH",
  path: "/realm/user_settings_defaults",
  service: "accounts",
  auth: "user",
  params: personalSettingParams,
  response: empty,
});

/**
 * PATCH /realm, the part this server supports: the organization's message retention
 * (`"unlimited"` or -1 keeps messages forever; a positive number of days otherwise).
 * Owners only, as in Zulip. Other realm settings are reported as ignored parameters.
 */
export const UpdateRealm = route({
  method: "PATCH",
  path: "/realm",
  service: "accounts",
  auth: "user",
  params: {
    message_retention_days: p.json(z.union([z.number().int(), z.string()])),
  },
  response: empty,
});
