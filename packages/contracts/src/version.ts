/** The API level this server speaks (Zulip 9.0-era, as our spec describes). */
export const ZULIP_FEATURE_LEVEL = 267;
export const ZULIP_VERSION = "9.0-teamchat-0.1.0";
export const ZULIP_MERGE_BASE = "9.0";
export const MAX_MESSAGE_LENGTH = 10000;
export const MAX_TOPIC_LENGTH = 60;
export const MAX_STREAM_NAME_LENGTH = 60;
export const MAX_STREAM_DESCRIPTION_LENGTH = 1024;
export const EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS = 90;

/** Files the gateway serves itself, at the root, without authentication (register names them). */
export const EMOJI_DATA_PATH = "/static/emoji/emoji_api.json";
export const DEFAULT_LOGO_PATH = "/static/images/logo/org-logo.svg?version=0";
/** The Notification Bot's avatar (a fixed image, as Zulip's system bots have), relative as uploaded avatars are. */
export const SYSTEM_BOT_AVATAR_PATH = "/static/images/static_avatars/notification-bot.png";
/** The avatar of Zulip's "Unknown user" stand-in for a user a guest may not access (relative, as the bot's). */
export const INACCESSIBLE_USER_AVATAR_PATH = "/static/images/unknown-user-avatar.png";
