import type { Queryable } from "@chat/platform";
import {
  AVAILABLE_NOTIFICATION_SOUNDS,
  EMOJISET_CHOICES,
  LEGACY_DISPLAY_SETTINGS,
  LEGACY_NOTIFICATION_SETTINGS,
  SETTING_DEFAULTS,
  type SettingValue,
} from "../lib/user-settings";
import { listAlertWords } from "../store/alert-words";
import { getRealmDefaultsRow, getUserSettingsRow, getUserSettingsRows, type StoredSettings } from "../store/settings";
import { getUsersByIds } from "../store/users";
import { customProfileFieldsState } from "./custom-profile-fields";

/** A user's current value of every setting (stored ones over the defaults, plus the two columns). */
export function effectiveSettings(row: StoredSettings, user: { timezone: string; presenceEnabled: boolean }): Record<string, SettingValue> {
  const out: Record<string, SettingValue> = { ...SETTING_DEFAULTS };
  for (const [k, v] of Object.entries(row)) if (Object.hasOwn(SETTING_DEFAULTS, k)) out[k] = v;
  out.timezone = user.timezone;
  out.presence_enabled = user.presenceEnabled;
  return out;
}

/** The organization's current defaults for new users. */
export function effectiveRealmDefaults(row: StoredSettings): Record<string, SettingValue> {
  const out: Record<string, SettingValue> = { ...SETTING_DEFAULTS, presence_enabled: true };
  for (const [k, v] of Object.entries(row)) if (Object.hasOwn(out, k)) out[k] = v;
  return out;
}

export async function getEffectiveSettings(db: Queryable, user: { id: number; realmId: number; timezone: string; presenceEnabled: boolean }) {
  return effectiveSettings(await getUserSettingsRow(db, user.realmId, user.id), user);
}

/** Other services' read-through: every setting of some users of the realm; unknown users are absent. */
export async function getInternalUserSettings(db: Queryable, realmId: number, userIds: number[]) {
  if (!userIds.length) return [];
  const [users, stored] = await Promise.all([getUsersByIds(db, realmId, userIds), getUserSettingsRows(db, realmId, userIds)]);
  return users.map((u) => ({ user_id: u.id, settings: effectiveSettings(stored.get(u.id) ?? {}, u) }));
}

export interface SettingsStateContext {
  db: Queryable;
  me: { id: number; realmId: number; timezone: string; presenceEnabled: boolean };
  wants: (type: string) => boolean;
  capabilities: Record<string, unknown>;
}

/**
 * The register slice issue 10 owns: `user_settings` (and, for clients without the
 * `user_settings_object` capability, the legacy flattened keys), `realm_user_settings_defaults`,
 * `alert_words`, `custom_profile_fields` + `custom_profile_field_types`.
 */
export async function settingsRegisterState(ctx: SettingsStateContext): Promise<Record<string, unknown>> {
  const { db, me, wants } = ctx;
  const state: Record<string, unknown> = {};
  // Independent reads, in parallel.
  const [settings, defaultsRow, alertWords, profileFields] = await Promise.all([
    getEffectiveSettings(db, me),
    wants("realm_user_settings_defaults") ? getRealmDefaultsRow(db, me.realmId) : null,
    wants("alert_words") ? listAlertWords(db, me.realmId, me.id) : null,
    wants("custom_profile_fields") ? customProfileFieldsState(db, me.realmId) : null,
  ]);
  const extras = { available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS, emojiset_choices: EMOJISET_CHOICES };
  if (wants("user_settings")) state.user_settings = { ...settings, ...extras };
  if (ctx.capabilities.user_settings_object !== true) {
    if (wants("update_display_settings")) {
      for (const k of LEGACY_DISPLAY_SETTINGS) state[k] = settings[k];
      Object.assign(state, { emojiset_choices: EMOJISET_CHOICES, timezone: settings.timezone });
    }
    if (wants("update_global_notifications")) {
      for (const k of LEGACY_NOTIFICATION_SETTINGS) state[k] = settings[k];
      state.available_notification_sounds = AVAILABLE_NOTIFICATION_SOUNDS;
    }
  }
  if (wants("realm_user_settings_defaults")) {
    state.realm_user_settings_defaults = { ...effectiveRealmDefaults(defaultsRow!), ...extras };
  }
  if (alertWords) state.alert_words = alertWords;
  if (profileFields) Object.assign(state, profileFields);
  return state;
}
