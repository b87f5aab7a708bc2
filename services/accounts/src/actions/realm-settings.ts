import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { checkAuthenticationMethods } from "../lib/authentication-methods";
import { ROLE } from "../lib/format";
import {
  ANNOUNCEMENT_CHANNEL_SETTINGS,
  answeredRealmValue,
  checkRealmSettingValues,
  clientRealmValue,
  groupSettingColumns,
  groupSettingOfColumn,
  REALM_GROUP_SETTINGS,
  realmRowValue,
  settingGroupName,
  UPDATE_DICT_REALM_SETTINGS,
  type RealmValue,
} from "../lib/realm-settings";
import { messagingOf } from "../lib/messaging-client";
import { clearAnnouncementChannel, lockRealm, updateRealmSettings } from "../store/realms";
import { getGroupsByIds, systemGroupIds } from "../store/user-groups";
import { activeUserIds } from "../store/users";
import { requireAdmin } from "./profile";
import { updateFullMembersInTx } from "./system-groups";
import { notifyAccessSettingChangedInTx } from "./user-access";
import { limitsGuests } from "../queries/user-access";

/**
 * PATCH /realm, as Zulip's update_realm: administrators only (some settings owners only);
 * every value is checked before anything changes; then, in one transaction, the settings whose
 * value differs are stored, each announced to every active user of the organization (Zulip's
 * do_set_realm_property). A new waiting period moves members in or out of role:fullmembers at
 * once. Answers what changed, as Zulip does.
 *
 * A group setting (an id, or `{new, old}` where `old` must be the current group) is stored in its
 * column (see REALM_GROUP_SETTINGS) and announced as `update_dict`; a creation policy and its
 * group are announced together whichever of the two was changed.
 */
export async function doUpdateRealm(deps: AccountsDeps, who: Identity, given: Record<string, unknown>): Promise<Record<string, RealmValue>> {
  requireAdmin(who);
  const settings = { ...given };
  const groupChanges = new Map<string, { new: number; old?: number }>();
  for (const setting of Object.keys(REALM_GROUP_SETTINGS)) {
    const change = settings[setting] as number | { new: number; old?: number } | undefined;
    delete settings[setting];
    if (change !== undefined) groupChanges.set(setting, typeof change === "number" ? { new: change } : change);
  }
  const methods = settings.authentication_methods as Record<string, boolean> | undefined;
  delete settings.authentication_methods;
  if (methods !== undefined) checkAuthenticationMethods(methods, who.role === ROLE.owner);
  const values = checkRealmSettingValues(settings, who.role === ROLE.owner);
  if (groupChanges.size) {
    const rows = await getGroupsByIds(deps.pool, who.realmId, [...groupChanges.values()].map((c) => c.new));
    const newGroups = Object.fromEntries([...groupChanges].map(([setting, change]) => [setting, change.new]));
    for (const [column, stored] of groupSettingColumns(newGroups, new Map(rows.map((g) => [g.id, g])))) values.set(column, stored);
  }
  if (!values.size) return {};
  await checkAnnouncementChannels(deps, who, values);
  return withTx(deps.pool, async (tx) => {
    const realm = await lockRealm(tx, who.realmId);
    if (!realm) throw badRequest("Invalid organization");
    let systemGroups: Record<string, number> | undefined;
    const groupId = async (setting: string, stored: RealmValue) => (systemGroups ??= await systemGroupIds(tx, realm.id))[settingGroupName(setting, stored)];
    for (const [setting, change] of groupChanges) {
      const current = await groupId(setting, realmRowValue(realm, REALM_GROUP_SETTINGS[setting].column));
      if (change.old !== undefined && change.old !== current) throw badRequest("'old' value does not match the expected value.");
    }
    const changed = new Map([...values].filter(([name, value]) => realmRowValue(realm, name) !== value));
    if (!changed.size) return {};
    await updateRealmSettings(tx, realm.id, changed);
    const users = await activeUserIds(tx, realm.id);
    const answer: Record<string, RealmValue> = {};
    for (const [column, value] of changed) {
      const setting = groupSettingOfColumn(column);
      if (setting !== column) {
        await notifyRealmSettingChanged(tx, realm.id, column, value, users);
        if (settings[column] !== undefined) answer[column] = answeredRealmValue(column, value);
      }
      if (setting) {
        const id = await groupId(setting, value);
        await notifyRealmSettingChanged(tx, realm.id, setting, id, users);
        if (groupChanges.has(setting)) answer[setting] = id;
      }
    }
    const access = changed.get("can_access_all_users_group");
    if (access !== undefined) {
      await notifyAccessSettingChangedInTx(tx, deps, { ...realm, canAccessAllUsersGroup: access as string }, limitsGuests(realm));
    }
    const waiting = changed.get("waiting_period_threshold");
    if (waiting !== undefined) {
      await updateFullMembersInTx(tx, { ...realm, waitingPeriodThreshold: waiting as number }, deps.clock.now());
    }
    return answer;
  });
}

/**
 * An announcement channel must be a channel of the organization, asked of messaging, which owns
 * channels: Zulip's access_stream_by_id with allow_realm_admin, so an administrator may name a
 * private channel they are not subscribed to; "Invalid channel ID" otherwise.
 */
async function checkAnnouncementChannels(deps: AccountsDeps, who: Identity, values: Map<string, RealmValue>): Promise<void> {
  const ids = [...values].filter(([name, id]) => ANNOUNCEMENT_CHANNEL_SETTINGS.has(name) && id !== null).map(([, id]) => id as number);
  if (!ids.length) return;
  const accessible = new Set((await messagingOf(deps).accessibleStreams(who, { allActive: true })).map((s) => s.stream_id));
  if (ids.some((id) => !accessible.has(id))) throw badRequest("Invalid channel ID");
}

/**
 * Messaging deleted a channel: announcement settings naming it become disabled, as Zulip's
 * register reports a deactivated channel there as -1. No event: clients clear the setting
 * themselves on the channel's delete event, as Zulip's do.
 */
export async function doForgetDeletedChannel(deps: AccountsDeps, realmId: number, streamId: number): Promise<void> {
  await clearAnnouncementChannel(deps.pool, realmId, streamId);
}

/** The `realm` event for one changed setting, to `users`; its domain event drops cached settings. */
export async function notifyRealmSettingChanged(tx: Queryable, realmId: number, name: string, value: RealmValue, users: number[]): Promise<void> {
  const shown = clientRealmValue(name, value);
  const event = UPDATE_DICT_REALM_SETTINGS.has(name) || name in REALM_GROUP_SETTINGS
    ? { type: "realm", op: "update_dict", property: "default", data: { [name]: shown } }
    : { type: "realm", op: "update", property: name, value: shown };
  await emitEvent(tx, {
    type: "accounts.realm.updated",
    realmId,
    payload: { realm_id: realmId, property: name, value, client: { event, users } },
  });
}
