/**
 * The catalog of personal settings: built-in defaults (Zulip 9.0's), which legacy event group
 * each belongs to, and the value checks the route schemas leave to us. Pure data and functions.
 */

export type SettingValue = boolean | number | string;

/** Defaults of every stored setting (timezone and presence_enabled are columns of users). */
export const SETTING_DEFAULTS: Record<string, SettingValue> = {
  twenty_four_hour_time: false,
  dense_mode: true,
  web_mark_read_on_scroll_policy: 1,
  web_channel_default_view: 1,
  starred_message_counts: true,
  receives_typing_notifications: true,
  fluid_layout_width: false,
  high_contrast_mode: false,
  web_font_size_px: 14,
  web_line_height_percent: 122,
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
  enter_sends: false,
  enable_drafts_synchronization: true,
  enable_stream_desktop_notifications: false,
  enable_stream_email_notifications: false,
  enable_stream_push_notifications: false,
  enable_stream_audible_notifications: false,
  notification_sound: "zulip",
  enable_desktop_notifications: true,
  enable_sounds: true,
  enable_followed_topic_desktop_notifications: true,
  enable_followed_topic_email_notifications: true,
  enable_followed_topic_push_notifications: true,
  enable_followed_topic_audible_notifications: true,
  email_notifications_batching_period_seconds: 120,
  enable_offline_email_notifications: true,
  enable_offline_push_notifications: true,
  enable_online_push_notifications: true,
  enable_digest_emails: true,
  enable_marketing_emails: true,
  enable_login_emails: true,
  message_content_in_email_notifications: true,
  pm_content_in_desktop_notifications: true,
  wildcard_mentions_notify: true,
  enable_followed_topic_wildcard_mentions_notify: true,
  desktop_icon_count_display: 1,
  realm_name_in_email_notifications_policy: 1,
  automatically_follow_topics_policy: 3,
  automatically_unmute_topics_in_muted_streams_policy: 2,
  automatically_follow_topics_where_mentioned: true,
  send_private_typing_notifications: true,
  send_stream_typing_notifications: true,
  send_read_receipts: true,
  allow_private_data_export: false,
  email_address_visibility: 1,
  web_navigate_to_sent_message: true,
};

/** Settings that live on the users row rather than in user_settings. */
export const COLUMN_SETTINGS = ["timezone", "presence_enabled"] as const;

/** Settings an organization cannot preset for new users. */
export const OWN_ONLY_SETTINGS = new Set(["default_language", "timezone", "enable_marketing_emails", "enable_login_emails", "allow_private_data_export"]);

/** Settings older clients learn through `update_display_settings` (Zulip's legacy display group). */
export const LEGACY_DISPLAY_SETTINGS = [
  "color_scheme",
  "default_language",
  "web_home_view",
  "demote_inactive_streams",
  "dense_mode",
  "emojiset",
  "enable_drafts_synchronization",
  "enter_sends",
  "fluid_layout_width",
  "high_contrast_mode",
  "left_side_userlist",
  "starred_message_counts",
  "translate_emoticons",
  "twenty_four_hour_time",
];

/** Settings older clients learn through `update_global_notifications`. */
export const LEGACY_NOTIFICATION_SETTINGS = [
  "enable_desktop_notifications",
  "enable_digest_emails",
  "enable_login_emails",
  "enable_marketing_emails",
  "email_notifications_batching_period_seconds",
  "enable_offline_email_notifications",
  "enable_offline_push_notifications",
  "enable_online_push_notifications",
  "enable_sounds",
  "enable_stream_audible_notifications",
  "enable_stream_desktop_notifications",
  "enable_stream_email_notifications",
  "enable_stream_push_notifications",
  "message_content_in_email_notifications",
  "notification_sound",
  "pm_content_in_desktop_notifications",
  "desktop_icon_count_display",
  "realm_name_in_email_notifications_policy",
  "presence_enabled",
  "wildcard_mentions_notify",
];

export const AVAILABLE_NOTIFICATION_SOUNDS = ["chime-saved", "ding", "zulip"];
export const EMOJISET_CHOICES = [
  { key: "google", text: "Google" },
  { key: "twitter", text: "Twitter" },
  { key: "text", text: "Plain text" },
];

/** Languages a user may pick, with their English names (sent as `language_name`). */
export const LANGUAGES: Record<string, string> = {
  en: "English",
  en_GB: "British English",
  ar: "Arabic",
  bg: "Bulgarian",
  bn: "Bengali",
  ca: "Catalan",
  cs: "Czech",
  cy: "Welsh",
  da: "Danish",
  de: "German",
  el: "Greek",
  eo: "Esperanto",
  es: "Spanish",
  fa: "Persian",
  fi: "Finnish",
  fr: "French",
  gl: "Galician",
  gu: "Gujarati",
  hi: "Hindi",
  hu: "Hungarian",
  id: "Indonesian",
  it: "Italian",
  ja: "Japanese",
  ko: "Korean",
  lt: "Lithuanian",
  lv: "Latvian",
  ml: "Malayalam",
  mn: "Mongolian",
  nl: "Dutch",
  no: "Norwegian",
  pa: "Punjabi",
  pl: "Polish",
  pt: "Portuguese",
  pt_BR: "Brazilian Portuguese",
  pt_PT: "European Portuguese",
  ro: "Romanian",
  ru: "Russian",
  si: "Sinhala",
  sk: "Slovak",
  sr: "Serbian",
  sv: "Swedish",
  ta: "Tamil",
  te: "Telugu",
  tl: "Tagalog",
  tr: "Turkish",
  uk: "Ukrainian",
  uz: "Uzbek",
  vi: "Vietnamese",
  "zh-hans": "Simplified Chinese",
  "zh-hant": "Traditional Chinese",
};

const MAX_BATCHING_PERIOD_SECONDS = 7 * 24 * 60 * 60;

/**
 * Checks a setting value beyond its type and enum (which the route schema checks), with
 * Zulip's messages. Returns the message of the first problem, or null.
 */
export function settingProblem(name: string, value: SettingValue): string | null {
  switch (name) {
    case "default_language":
      return Object.hasOwn(LANGUAGES, value as string) ? null : "Invalid default_language";
    case "notification_sound":
      return AVAILABLE_NOTIFICATION_SOUNDS.includes(value as string) || value === "none" ? null : `Invalid notification sound '${value}'`;
    case "email_notifications_batching_period_seconds": {
      const n = value as number;
      return n > 0 && n <= MAX_BATCHING_PERIOD_SECONDS ? null : `Invalid email batching period: ${n} seconds`;
    }
    case "timezone":
      return isKnownTimezone(value as string) ? null : "timezone is not a recognized time zone";
    case "web_font_size_px":
    case "web_line_height_percent":
      // Zulip keeps them in positive small integer columns (at most 32,767).
      return (value as number) > 0 && (value as number) <= 32_767 ? null : `Invalid ${name}`;
    default:
      return null;
  }
}

let zones: Set<string> | null = null;
/** IANA zone names known to this runtime (plus UTC), as Zulip checks against zoneinfo. */
export function isKnownTimezone(tz: string): boolean {
  zones ??= new Set([...Intl.supportedValuesOf("timeZone"), "UTC", "Etc/UTC"]);
  if (zones.has(tz)) return true;
  // Aliases (e.g. "Asia/Calcutta") are accepted by Intl even when not listed.
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return tz.includes("/") || tz === "UTC" || tz === "GMT";
  } catch {
    return false;
  }
}

/** The legacy event a change of `name` also produces, if any. */
export function legacyGroupOf(name: string): "display" | "notification" | null {
  if (LEGACY_DISPLAY_SETTINGS.includes(name) || name === "timezone") return "display";
  if (LEGACY_NOTIFICATION_SETTINGS.includes(name)) return "notification";
  return null;
}

/** Email visibility policies. */
export const EMAIL_VISIBILITY = { everyone: 1, members: 2, admins: 3, nobody: 4, moderators: 5 } as const;

/** The API email of a user whose real address is not public to everyone. */
export function dummyEmail(userId: number, realmStringId: string): string {
  return `user${userId}@${realmStringId}.invalid`;
}

/** Whether `viewer` may see `target`'s delivery email under `target`'s visibility policy. */
export function canSeeDeliveryEmail(viewer: { id: number; role: number }, targetId: number, visibility: number): boolean {
  if (viewer.id === targetId) return true;
  switch (visibility) {
    case EMAIL_VISIBILITY.everyone:
      return true;
    case EMAIL_VISIBILITY.members:
      return viewer.role !== 600;
    case EMAIL_VISIBILITY.admins:
      return viewer.role <= 200;
    case EMAIL_VISIBILITY.moderators:
      return viewer.role <= 300;
    default:
      return false;
  }
}
