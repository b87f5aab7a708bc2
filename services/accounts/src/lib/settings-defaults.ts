/** Display settings (Zulip's legacy `update_display_settings` group). */
export const DISPLAY_SETTINGS = {
  twenty_four_hour_time: false,
  dense_mode: true,
  web_mark_read_on_scroll_policy: 1,
  web_channel_default_view: 1,
  starred_message_counts: true,
  receives_typing_notifications: true,
  web_navigate_to_sent_message: true,
  fluid_layout_width: false,
  high_contrast_mode: false,
  color_scheme: 1,
  translate_emoticons: false,
  display_emoji_reaction_users: true,
  default_language: "en",
  web_home_view: "inbox",
  web_escape_navigates_to_home_view: true,
  left_side_userlist: false,
  emojiset: "google",
  demote_inactive_streams: 1,
  user_list_style: 2,
  web_animate_image_previews: "on_hover",
  web_stream_unreads_count_display_policy: 2,
  web_font_size_px: 14,
  web_line_height_percent: 122,
};

/** Notification settings (Zulip's legacy `update_global_notifications` group). */
export const NOTIFICATION_SETTINGS = {
  enable_stream_desktop_notifications: false,
  enable_stream_email_notifications: false,
  enable_stream_push_notifications: false,
  enable_stream_audible_notifications: false,
  notification_sound: "zulip",
  enable_desktop_notifications: true,
  enable_sounds: true,
  email_notifications_batching_period_seconds: 120,
  enable_offline_email_notifications: true,
  enable_offline_push_notifications: true,
  enable_online_push_notifications: true,
  enable_followed_topic_desktop_notifications: true,
  enable_followed_topic_email_notifications: true,
  enable_followed_topic_push_notifications: true,
  enable_followed_topic_audible_notifications: true,
  enable_followed_topic_wildcard_mentions_notify: true,
  enable_digest_emails: true,
  enable_marketing_emails: true,
  enable_login_emails: true,
  message_content_in_email_notifications: true,
  pm_content_in_desktop_notifications: true,
  wildcard_mentions_notify: true,
  desktop_icon_count_display: 1,
  realm_name_in_email_notifications_policy: 1,
  automatically_follow_topics_policy: 3,
  automatically_unmute_topics_in_muted_streams_policy: 2,
  automatically_follow_topics_where_mentioned: true,
  presence_enabled: true,
  enter_sends: false,
};

export const OTHER_SETTINGS = {
  send_private_typing_notifications: true,
  send_stream_typing_notifications: true,
  send_read_receipts: true,
  allow_private_data_export: false,
  email_address_visibility: 1,
  enable_drafts_synchronization: true,
};

export const AVAILABLE_NOTIFICATION_SOUNDS = ["chime-saved", "ding", "zulip"];
export const EMOJISET_CHOICES = [
  { key: "google", text: "Google" },
  { key: "twitter", text: "Twitter" },
  { key: "text", text: "Plain text" },
];

/** Defaults new users get (GET register `realm_user_settings_defaults`). */
export function realmUserSettingsDefaults() {
  return {
    ...DISPLAY_SETTINGS,
    ...NOTIFICATION_SETTINGS,
    ...OTHER_SETTINGS,
    available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS,
    emojiset_choices: EMOJISET_CHOICES,
  };
}

/** A user's settings object; per-user values come from the user row where we store them. */
export function userSettings(u: { timezone: string; presenceEnabled: boolean }) {
  return {
    ...DISPLAY_SETTINGS,
    ...NOTIFICATION_SETTINGS,
    ...OTHER_SETTINGS,
    presence_enabled: u.presenceEnabled,
    timezone: u.timezone,
    available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS,
    emojiset_choices: EMOJISET_CHOICES,
  };
}
