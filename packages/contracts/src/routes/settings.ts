import { z } from "zod";
import { maxChars, p } from "../params";
import { empty, route, success } from "../route";
import { GroupSettingChange } from "./streams";

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
 * PATCH /settings: the caller's own settings, full name, password and email address. Each changed
 * setting emits `user_settings` (plus the legacy display/notification event where Zulip had one).
 * A new `email` changes nothing yet: a confirmation link goes to that address, and the answer
 * says so in `account_email` (as Zulip's server does; its API description leaves it out).
 */
export const UpdateSettings = route({
  method: "PATCH",
  path: "/settings",
  service: "accounts",
  auth: "user",
  params: {
    full_name: p.str(),
    email: p.str(),
    old_password: p.str(),
    new_password: p.str(),
    ...personalSettingParams,
    ...ownOnlySettingParams,
  },
  response: success({ account_email: z.string().optional() }),
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

/** A time limit in seconds: a positive integer, or `"unlimited"` (the accounts service checks which). */
const timeLimit = () => p.json(z.union([z.number().int(), z.string()]));
/** Zulip's CommonPolicyEnum: 1 members, 2 administrators, 3 full members, 4 moderators. */
const commonPolicy = () => intIn(1, 2, 3, 4);

/**
 * The organization settings PATCH /realm changes, in the order of Zulip's update_realm view, with
 * the enums of Zulip 9.0 (feature level 267). Checks that need more than the value itself (known
 * language, available video call providers, time limits, owner-only settings) are the accounts
 * service's, so that their texts are Zulip's.
 */
export const realmSettingParams = {
  name: p.str(maxChars(40)),
  description: p.str(maxChars(1000)),
  /** New users' addresses must be in one of the organization's domains (GET /realm/domains). */
  emails_restricted_to_domains: p.bool(),
  /** New users may not use an address of a known disposable email service. */
  disallow_disposable_email_addresses: p.bool(),
  invite_required: p.bool(),
  /** 1 members, 2 administrators, 3 full members, 4 moderators, 6 nobody. */
  invite_to_realm_policy: intIn(1, 2, 3, 4, 6),
  name_changes_disabled: p.bool(),
  email_changes_disabled: p.bool(),
  avatar_changes_disabled: p.bool(),
  inline_image_preview: p.bool(),
  inline_url_embed_preview: p.bool(),
  add_custom_emoji_policy: commonPolicy(),
  /** 1 members, 2 administrators, 3 full members, 4 moderators, 5 everyone. */
  delete_own_message_policy: intIn(1, 2, 3, 4, 5),
  message_content_delete_limit_seconds: timeLimit(),
  allow_message_editing: p.bool(),
  /** 1 members, 2 administrators, 3 full members, 4 moderators, 5 everyone, 6 nobody. */
  edit_topic_policy: intIn(1, 2, 3, 4, 5, 6),
  mandatory_topics: p.bool(),
  message_content_edit_limit_seconds: timeLimit(),
  allow_edit_history: p.bool(),
  default_language: p.str(),
  /** Days; the column is a PostgreSQL integer, as Zulip's PositiveIntegerField. */
  waiting_period_threshold: p.int(z.number().int().min(0).max(2 ** 31 - 1)),
  /** Channels for the automated announcements: a channel the administrator can access, or -1 (none). */
  new_stream_announcements_stream_id: p.int(),
  signup_announcements_stream_id: p.int(),
  zulip_update_announcements_stream_id: p.int(),
  /** `"unlimited"` keeps messages forever; otherwise a positive number of days. Owners only. */
  message_retention_days: timeLimit(),
  send_welcome_emails: p.bool(),
  digest_emails_enabled: p.bool(),
  message_content_allowed_in_email_notifications: p.bool(),
  /** 1 everyone, 2 everyone but only administrators add generic bots, 3 administrators. */
  bot_creation_policy: intIn(1, 2, 3),
  create_public_stream_policy: commonPolicy(),
  create_private_stream_policy: commonPolicy(),
  /**
   * Zulip 9.0's form of the two policies above (feature levels 264, 266): the id of the system
   * group role:members, role:fullmembers, role:moderators or role:administrators, or `{new, old}`.
   */
  /** The group whose members may create reusable invitation links (feature level 209); as the two below. */
  create_multiuse_invite_group: p.json(GroupSettingChange).alias("create_multiuse_invite_group_id"),
  can_create_public_channel_group: p.json(GroupSettingChange).alias("can_create_public_channel_group_id"),
  can_create_private_channel_group: p.json(GroupSettingChange).alias("can_create_private_channel_group_id"),
  /** Who accesses every user (feature level 225): role:everyone, or role:members (guests see only the users they share a channel or a conversation with). */
  can_access_all_users_group: p.json(GroupSettingChange).alias("can_access_all_users_group_id"),
  /** 2 administrators, 4 moderators, 6 nobody, 7 owners. */
  create_web_public_stream_policy: intIn(2, 4, 6, 7),
  invite_to_stream_policy: commonPolicy(),
  /** 1 members, 2 administrators, 3 full members, 4 moderators, 6 nobody. */
  move_messages_between_streams_policy: intIn(1, 2, 3, 4, 6),
  user_group_edit_policy: commonPolicy(),
  /** 1 anyone may send direct messages, 2 disabled (except to and from bots). */
  private_message_policy: intIn(1, 2),
  /** 1 everyone, 2 members, 3 full members, 5 administrators, 6 nobody, 7 moderators. */
  wildcard_mention_policy: intIn(1, 2, 3, 5, 6, 7),
  video_chat_provider: p.int(),
  /** The organization's Jitsi Meet server (feature level 212), a JSON string: a URL, or `"default"` for the server's. */
  jitsi_server_url: p.json(z.string()),
  giphy_rating: p.int(),
  default_code_block_language: p.str(),
  /** 0 Monday ... 6 Sunday. */
  digest_weekday: intIn(0, 1, 2, 3, 4, 5, 6),
  org_type: intIn(0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000),
  enable_spectator_access: p.bool(),
  want_advertise_in_communities_directory: p.bool(),
  enable_read_receipts: p.bool(),
  move_messages_within_stream_limit_seconds: timeLimit(),
  move_messages_between_streams_limit_seconds: timeLimit(),
  enable_guest_user_indicator: p.bool(),
  require_unique_names: p.bool(),
  presence_disabled: p.bool(),
  /** Which authentication methods are on, by name (`{"Email": true}`); owners only, at least one on. */
  authentication_methods: p.json(z.record(z.string(), z.boolean())).withProtoKeyError("Invalid authentication method: __proto__."),
};

/** What changed, as Zulip's update_realm answers: each changed setting's value, strings as "updated". */
const RealmSettingChanged = z.union([z.boolean(), z.number().int(), z.string(), z.null()]).optional();

/**
 * PATCH /realm: organization settings, administrators only (some owners only). Each changed
 * setting emits a `realm` event to every active user; parameters not listed above are reported
 * in `ignored_parameters_unsupported`.
 */
export const UpdateRealm = route({
  method: "PATCH",
  path: "/realm",
  service: "accounts",
  auth: "user",
  params: realmSettingParams,
  response: success(Object.fromEntries(Object.keys(realmSettingParams).map((name) => [name, RealmSettingChanged])) as Record<keyof typeof realmSettingParams, typeof RealmSettingChanged>),
});
