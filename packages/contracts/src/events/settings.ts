import { z } from "zod";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

const SettingValue = z.union([z.boolean(), z.number().int(), z.string()]);

/*
 * The `user_settings` / update client event and its domain event `accounts.user_settings.updated`
 * (payload `{user_id, property, value, client}`) are defined with the other accounts events
 * (`UserSettingsUpdateEvent`, `AccountsUserSettingsUpdated` in ./accounts).
 */

/**
 * Legacy copy of a display-setting change for clients without the `user_settings_object`
 * capability (the events service drops it for the others).
 */
export const UpdateDisplaySettingsEvent = z.strictObject({
  type: z.literal("update_display_settings"),
  user: z.string(),
  setting_name: z.string(),
  setting: SettingValue,
  language_name: z.string().optional(),
});

/** Legacy copy of a notification-setting change, as above. */
export const UpdateGlobalNotificationsEvent = z.strictObject({
  type: z.literal("update_global_notifications"),
  user: z.string(),
  notification_name: z.string(),
  setting: SettingValue,
});

/** Client event `realm_user_settings_defaults` / update, to every active user of the organization. */
export const RealmUserSettingsDefaultsUpdateEvent = z.strictObject({
  type: z.literal("realm_user_settings_defaults"),
  op: z.literal("update"),
  property: z.string(),
  value: SettingValue,
});

/** Client event `realm` / update for one organization setting, to every active user. */
export const RealmUpdateEvent = z.strictObject({
  type: z.literal("realm"),
  op: z.literal("update"),
  property: z.string(),
  value: z.union([SettingValue, z.null()]),
});

/**
 * Client event `realm` / update_dict: the format Zulip keeps for the message editing settings
 * (allow_message_editing, edit_topic_policy, message_content_edit_limit_seconds), one changed
 * setting in `data`; `property` is always "default".
 */
export const RealmUpdateDictEvent = z.strictObject({
  type: z.literal("realm"),
  op: z.literal("update_dict"),
  property: z.literal("default"),
  data: z.record(z.string(), z.union([SettingValue, z.null()])),
});

export const AccountsDisplaySettingsUpdated = defineEvent(
  "accounts.display_settings.updated",
  z.object({ user_id: z.number().int(), client: noticeOf(UpdateDisplaySettingsEvent) }),
);
export const AccountsGlobalNotificationsUpdated = defineEvent(
  "accounts.global_notifications.updated",
  z.object({ user_id: z.number().int(), client: noticeOf(UpdateGlobalNotificationsEvent) }),
);
export const AccountsRealmUserSettingsDefaultsUpdated = defineEvent(
  "accounts.realm_user_settings_defaults.updated",
  z.object({ property: z.string(), value: SettingValue, client: noticeOf(RealmUserSettingsDefaultsUpdateEvent) }),
);
/**
 * An organization setting changed (consumers drop their cached copy of the organization's
 * settings). `value` is what GET /internal/realms/{id} reports: `message_retention_days` is null
 * when messages are kept forever, where the client event says -1 as Zulip does.
 */
export const AccountsRealmUpdated = defineEvent(
  "accounts.realm.updated",
  z
    .object({ realm_id: z.number().int(), property: z.string(), value: z.union([SettingValue, z.null()]), client: noticeOf(z.union([RealmUpdateEvent, RealmUpdateDictEvent])) })
    .passthrough(),
);
