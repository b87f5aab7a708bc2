/**
 * The personal settings messaging honours. Accounts owns them; messaging keeps a replica of
 * these names only. Defaults are Zulip's, used when accounts does not know the user.
 */

export const REPLICATED_SETTINGS = [
  "enable_drafts_synchronization",
  "automatically_follow_topics_policy",
  "automatically_unmute_topics_in_muted_streams_policy",
  "automatically_follow_topics_where_mentioned",
  "send_private_typing_notifications",
  "send_stream_typing_notifications",
  "receives_typing_notifications",
  "send_read_receipts",
  // Read in SQL by the send path (missed-message emails): the batching period of a recipient's
  // rows, and who gets channel email notifications where their subscription inherits.
  "email_notifications_batching_period_seconds",
  "enable_stream_email_notifications",
] as const;

export interface UserSettingsView {
  enableDraftsSynchronization: boolean;
  /** One of AUTO_POLICY. */
  followTopicsPolicy: number;
  /** One of AUTO_POLICY. */
  unmuteTopicsInMutedStreamsPolicy: number;
  followTopicsWhereMentioned: boolean;
  /** POST /typing refuses a user who turned typing notifications off (direct / channel). */
  sendPrivateTypingNotifications: boolean;
  sendStreamTypingNotifications: boolean;
  /** Typing events reach only users who receive them. */
  receivesTypingNotifications: boolean;
  /** Whether others may see that the user read a message (read receipts). */
  sendReadReceipts: boolean;
}

export const DEFAULT_USER_SETTINGS: UserSettingsView = {
  enableDraftsSynchronization: true,
  followTopicsPolicy: 3,
  unmuteTopicsInMutedStreamsPolicy: 2,
  followTopicsWhereMentioned: true,
  sendPrivateTypingNotifications: true,
  sendStreamTypingNotifications: true,
  receivesTypingNotifications: true,
  sendReadReceipts: true,
};

export function isReplicatedSetting(name: string): boolean {
  return (REPLICATED_SETTINGS as readonly string[]).includes(name);
}

/** Whether every replicated name is known (otherwise accounts is asked). */
export function hasAllSettings(stored: Record<string, unknown> | undefined): boolean {
  return stored !== undefined && REPLICATED_SETTINGS.every((n) => Object.hasOwn(stored, n));
}

/** The replicated names of a settings object (accounts' answer carries all of them). */
export function pickReplicated(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(REPLICATED_SETTINGS.filter((n) => Object.hasOwn(settings, n)).map((n) => [n, settings[n]]));
}

/** A typed view of stored values, each missing or malformed one at its default. */
export function settingsView(stored: Record<string, unknown> = {}): UserSettingsView {
  const bool = (v: unknown, d: boolean) => (typeof v === "boolean" ? v : d);
  const int = (v: unknown, d: number) => (typeof v === "number" && Number.isInteger(v) ? v : d);
  return {
    enableDraftsSynchronization: bool(stored.enable_drafts_synchronization, DEFAULT_USER_SETTINGS.enableDraftsSynchronization),
    followTopicsPolicy: int(stored.automatically_follow_topics_policy, DEFAULT_USER_SETTINGS.followTopicsPolicy),
    unmuteTopicsInMutedStreamsPolicy: int(stored.automatically_unmute_topics_in_muted_streams_policy, DEFAULT_USER_SETTINGS.unmuteTopicsInMutedStreamsPolicy),
    followTopicsWhereMentioned: bool(stored.automatically_follow_topics_where_mentioned, DEFAULT_USER_SETTINGS.followTopicsWhereMentioned),
    sendPrivateTypingNotifications: bool(stored.send_private_typing_notifications, DEFAULT_USER_SETTINGS.sendPrivateTypingNotifications),
    sendStreamTypingNotifications: bool(stored.send_stream_typing_notifications, DEFAULT_USER_SETTINGS.sendStreamTypingNotifications),
    receivesTypingNotifications: bool(stored.receives_typing_notifications, DEFAULT_USER_SETTINGS.receivesTypingNotifications),
    sendReadReceipts: bool(stored.send_read_receipts, DEFAULT_USER_SETTINGS.sendReadReceipts),
  };
}
