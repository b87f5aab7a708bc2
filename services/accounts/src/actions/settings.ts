import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { hashPassword, longEnoughPassword, sealApiKey, unsealApiKey, verifyPassword } from "../lib/credentials";
import { ROLE } from "../lib/format";
import {
  canSeeDeliveryEmail,
  dummyEmail,
  EMAIL_VISIBILITY,
  LANGUAGES,
  legacyGroupOf,
  OWN_ONLY_SETTINGS,
  SETTING_DEFAULTS,
  settingProblem,
  type SettingValue,
} from "../lib/user-settings";
import { effectiveRealmDefaults, effectiveSettings } from "../queries/settings";
import { newestSealedKey, resealApiKey } from "../store/api-keys";
import { getRealm } from "../store/realms";
import { getProfileUser, setApiEmail, setPasswordHash, setTimezone, type ProfileUser } from "../store/profile";
import {
  getRealmDefaultsRow,
  lockRealmDefaultsRow,
  lockUserSettingsRow,
  saveRealmDefaultsRow,
  saveUserSettingsRow,
} from "../store/settings";
import { activeUserIds, listRealmUsers, setPresenceEnabled, type UserRow } from "../store/users";
import { changeFullNameInTx, notifyAvatar, notifyRealmUserUpdate, requireAdmin } from "./profile";
import { doStartEmailChangeInTx } from "./email-change";
import { doForcePresenceUpdateInTx } from "./presence";


export interface SettingsInput {
  fullName?: string;
  /** A new email address: only starts the change (a confirmation link goes to it). */
  email?: string;
  oldPassword?: string;
  newPassword?: string;
  /** Setting name -> new value, only the ones the request carried. */
  settings: Record<string, SettingValue>;
}

function checkSettingValues(settings: Record<string, SettingValue>) {
  for (const [name, value] of Object.entries(settings)) {
    const problem = settingProblem(name, value);
    if (problem) throw badRequest(problem);
  }
}

/**
 * PATCH /settings. Everything is validated first; then, in one transaction, the email change's
 * start, the full name, the password and each setting whose value actually changes, each with
 * Zulip's events.
 */
export async function doUpdateSettings(deps: AccountsDeps, who: Identity, p: SettingsInput): Promise<{ emailChangeStarted: boolean }> {
  checkSettingValues(p.settings);
  const password = p.newPassword !== undefined ? await checkNewPassword(deps, who, p.oldPassword ?? "", p.newPassword) : undefined;
  let emailChangeStarted = false;
  await withTx(deps.pool, async (tx) => {
    const user = await getProfileUser(tx, who.realmId, who.userId, { lock: true });
    if (!user) throw badRequest("No such user");
    if (p.email !== undefined) emailChangeStarted = await doStartEmailChangeInTx(tx, deps, user, p.email);
    const visibility = p.settings.email_address_visibility;
    if (user.isBot && visibility !== undefined && visibility !== EMAIL_VISIBILITY.everyone) {
      throw badRequest("A bot's email address is always visible to everyone");
    }
    if (p.fullName !== undefined && (await mayChangeOwnName(tx, user))) await changeFullNameInTx(tx, deps, user, p.fullName);
    if (password) {
      await setPasswordHash(tx, user.realmId, user.id, password.hash);
      if (password.loginKey) await resealApiKey(tx, user.realmId, password.loginKey.id, password.loginKey.sealed);
    }
    const row = await lockUserSettingsRow(tx, user.realmId, user.id);
    const current = effectiveSettings(row, user);
    for (const [name, value] of Object.entries(p.settings)) {
      if (current[name] === value) continue;
      if (name === "timezone") await setTimezone(tx, user.realmId, user.id, value as string);
      else if (name === "presence_enabled") await setPresenceEnabled(tx, user.realmId, user.id, value as boolean);
      else row[name] = value;
      await notifySettingChanged(tx, user, name, value);
      if (name === "presence_enabled") await doForcePresenceUpdateInTx(tx, deps, user.realmId, user.id, value as boolean, deps.clock.now());
      if (name === "timezone") {
        await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, email: user.email, timezone: value as string });
      }
      if (name === "email_address_visibility") {
        // Stored first: the events it causes tell replicas whether the email is now public.
        await saveUserSettingsRow(tx, user.realmId, user.id, row);
        await changeEmailVisibilityInTx(tx, deps, user, current[name] as number, value as number);
      }
      current[name] = value;
    }
    await saveUserSettingsRow(tx, user.realmId, user.id, row);
  });
  return { emailChangeStarted };
}

/**
 * With name changes disabled in the organization only administrators change their own name;
 * anyone else's new name is ignored without an error, as Zulip's json_change_settings does
 * (clients do not offer it).
 */
async function mayChangeOwnName(tx: Queryable, user: ProfileUser): Promise<boolean> {
  return user.role <= ROLE.administrator || !(await getRealm(tx, user.realmId))?.nameChangesDisabled;
}

/**
 * Verifies the old password and hashes the new one, and seals the user's login key under the new
 * one (outside the transaction: scrypt is slow), so that a password change keeps the key that
 * POST /fetch_api_key hands out, as in Zulip.
 */
async function checkNewPassword(
  deps: AccountsDeps,
  who: Identity,
  oldPassword: string,
  newPassword: string,
): Promise<{ hash: string; loginKey: { id: number; sealed: string } | null }> {
  const user = await getProfileUser(deps.pool, who.realmId, who.userId);
  if (!user?.passwordHash || !(await verifyPassword(oldPassword, user.passwordHash))) throw badRequest("Wrong password!");
  if (!longEnoughPassword(newPassword)) throw badRequest("New password is too weak!");
  const kept = await newestSealedKey(deps.pool, who.realmId, who.userId);
  const key = kept ? await unsealApiKey(kept.sealed, oldPassword) : null;
  return {
    hash: await hashPassword(newPassword, deps.config.PASSWORD_SCRYPT_COST),
    loginKey: kept && key !== null ? { id: kept.id, sealed: await sealApiKey(key, newPassword, deps.config.PASSWORD_SCRYPT_COST) } : null,
  };
}

/** `user_settings` update to the user's clients, plus the legacy event where Zulip had one. */
export async function notifySettingChanged(tx: Queryable, user: Pick<UserRow, "id" | "realmId" | "email">, name: string, value: SettingValue): Promise<void> {
  const languageName = name === "default_language" ? { language_name: LANGUAGES[value as string] } : {};
  const users = [user.id];
  await emitEvent(tx, {
    type: "accounts.user_settings.updated",
    realmId: user.realmId,
    payload: {
      user_id: user.id,
      property: name,
      value,
      client: { event: { type: "user_settings", op: "update", property: name, value, ...languageName }, users },
    },
  });
  const legacy = legacyGroupOf(name);
  if (legacy === "display") {
    await emitEvent(tx, {
      type: "accounts.display_settings.updated",
      realmId: user.realmId,
      payload: {
        user_id: user.id,
        client: { event: { type: "update_display_settings", user: user.email, setting_name: name, setting: value, ...languageName }, users },
      },
    });
  } else if (legacy === "notification") {
    await emitEvent(tx, {
      type: "accounts.global_notifications.updated",
      realmId: user.realmId,
      payload: {
        user_id: user.id,
        client: { event: { type: "update_global_notifications", user: user.email, notification_name: name, setting: value }, users },
      },
    });
  }
}


/**
 * A new email visibility: users who gain or lose sight of the delivery email get it (or null);
 * crossing "everyone" also switches the API email between the real and a dummy address.
 */
async function changeEmailVisibilityInTx(tx: Queryable, deps: AccountsDeps, user: ProfileUser, before: number, after: number): Promise<void> {
  if (!user.isActive) return;
  const viewers = (await listRealmUsers(tx, user.realmId)).filter((u) => u.isActive);
  const gained = viewers.filter((v) => !canSeeDeliveryEmail(v, user.id, before) && canSeeDeliveryEmail(v, user.id, after)).map((v) => v.id);
  const lost = viewers.filter((v) => canSeeDeliveryEmail(v, user.id, before) && !canSeeDeliveryEmail(v, user.id, after)).map((v) => v.id);
  if (gained.length) await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, delivery_email: user.deliveryEmail }, gained);
  if (lost.length) await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, delivery_email: null }, lost);
  if ((before === EMAIL_VISIBILITY.everyone) === (after === EMAIL_VISIBILITY.everyone) || user.isBot) return;
  const realm = await getRealm(tx, user.realmId);
  const email = after === EMAIL_VISIBILITY.everyone ? user.deliveryEmail : dummyEmail(user.id, realm!.stringId);
  await setApiEmail(tx, user.realmId, user.id, email);
  await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, new_email: email });
  // Whether clients may compute the Gravatar from the API email changed with it (Zulip's
  // notify_avatar_url_change): the avatar fields again, so they show the URL or compute it.
  await notifyAvatar(tx, deps, user.realmId, user.id);
}

/**
 * Called when a user is created: their settings start as the organization's defaults (stored,
 * so later changes of the defaults do not affect them). Returns the row as it now is.
 */
export async function applyRealmDefaultsToNewUser(tx: Queryable, user: UserRow): Promise<UserRow> {
  const defaults = await getRealmDefaultsRow(tx, user.realmId);
  const { presence_enabled: presence, ...stored } = defaults;
  // A bot's address is everyone's to see, whatever the default (as Zulip creates bots).
  if (user.isBot) delete stored.email_address_visibility;
  // The language is the organization's (Zulip's create_user takes realm.default_language).
  const realm = await getRealm(tx, user.realmId);
  if (realm && realm.defaultLanguage !== SETTING_DEFAULTS.default_language) stored.default_language = realm.defaultLanguage;
  if (Object.keys(stored).length) await saveUserSettingsRow(tx, user.realmId, user.id, stored);
  if (presence === false) await setPresenceEnabled(tx, user.realmId, user.id, false);
  const visibility = stored.email_address_visibility;
  if (visibility !== undefined && visibility !== EMAIL_VISIBILITY.everyone) {
    await setApiEmail(tx, user.realmId, user.id, dummyEmail(user.id, realm!.stringId));
  }
  return (await getProfileUser(tx, user.realmId, user.id)) ?? user;
}

/** PATCH /realm/user_settings_defaults (administrators): one event per changed default. */
export async function doUpdateRealmUserSettingsDefaults(deps: AccountsDeps, who: Identity, changes: Record<string, SettingValue>): Promise<void> {
  requireAdmin(who);
  checkSettingValues(changes);
  await withTx(deps.pool, async (tx) => {
    const row = await lockRealmDefaultsRow(tx, who.realmId);
    const current = effectiveRealmDefaults(row);
    const users = await activeUserIds(tx, who.realmId);
    for (const [name, value] of Object.entries(changes)) {
      if (OWN_ONLY_SETTINGS.has(name) || current[name] === value) continue;
      row[name] = value;
      current[name] = value;
      await emitEvent(tx, {
        type: "accounts.realm_user_settings_defaults.updated",
        realmId: who.realmId,
        payload: { property: name, value, client: { event: { type: "realm_user_settings_defaults", op: "update", property: name, value }, users } },
      });
    }
    await saveRealmDefaultsRow(tx, who.realmId, row);
  });
}
