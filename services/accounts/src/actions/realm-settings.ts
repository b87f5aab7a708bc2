import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { ROLE } from "../lib/format";
import {
  ANNOUNCEMENT_CHANNEL_SETTINGS,
  answeredRealmValue,
  CHANNEL_CREATION_GROUP_SETTINGS,
  channelCreationPolicies,
  checkRealmSettingValues,
  clientRealmValue,
  realmRowValue,
  policyGroupName,
  UPDATE_DICT_REALM_SETTINGS,
  type RealmValue,
} from "../lib/realm-settings";
import { messagingOf } from "../lib/messaging-client";
import { clearAnnouncementChannel, lockRealm, updateRealmSettings } from "../store/realms";
import { getGroupsByIds, systemGroupIds } from "../store/user-groups";
import { activeUserIds } from "../store/users";
import { requireAdmin } from "./profile";
import { updateFullMembersInTx } from "./system-groups";

/**
 * PATCH /realm, as Zulip's update_realm: administrators only (some settings owners only);
 * every value is checked before anything changes; then, in one transaction, the settings whose
 * value differs are stored, each announced to every active user of the organization (Zulip's
 * do_set_realm_property). A new waiting period moves members in or out of role:fullmembers at
 * once. Answers what changed, as Zulip does.
 *
 * The channel creation groups (can_create_public/private_channel_group) are the creation
 * policies in Zulip 9.0's form: stored as the policy, answered and announced in the form asked,
 * announced in both.
 */
export async function doUpdateRealm(deps: AccountsDeps, who: Identity, given: Record<string, unknown>): Promise<Record<string, RealmValue>> {
  requireAdmin(who);
  const settings = { ...given };
  const groupChanges = new Map<string, { new: number; old?: number }>();
  for (const group of Object.keys(CHANNEL_CREATION_GROUP_SETTINGS)) {
    const change = settings[group] as number | { new: number; old?: number } | undefined;
    delete settings[group];
    if (change !== undefined) groupChanges.set(group, typeof change === "number" ? { new: change } : change);
  }
  const values = checkRealmSettingValues(settings, who.role === ROLE.owner);
  if (groupChanges.size) {
    const rows = await getGroupsByIds(deps.pool, who.realmId, [...groupChanges.values()].map((c) => c.new));
    const newGroups = Object.fromEntries([...groupChanges].map(([group, change]) => [group, change.new]));
    for (const [name, policy] of channelCreationPolicies(newGroups, new Map(rows.map((g) => [g.id, g])))) values.set(name, policy);
  }
  if (!values.size) return {};
  await checkAnnouncementChannels(deps, who, values);
  return withTx(deps.pool, async (tx) => {
    const realm = await lockRealm(tx, who.realmId);
    if (!realm) throw badRequest("Invalid organization");
    let systemGroups: Record<string, number> | undefined;
    const groupOf = async (policy: RealmValue) => (systemGroups ??= await systemGroupIds(tx, realm.id))[policyGroupName(policy as number)];
    for (const [group, change] of groupChanges) {
      const current = await groupOf(realmRowValue(realm, CHANNEL_CREATION_GROUP_SETTINGS[group]));
      if (change.old !== undefined && change.old !== current) throw badRequest("'old' value does not match the expected value.");
    }
    const changed = new Map([...values].filter(([name, value]) => realmRowValue(realm, name) !== value));
    if (!changed.size) return {};
    await updateRealmSettings(tx, realm.id, changed);
    const users = await activeUserIds(tx, realm.id);
    const answer: Record<string, RealmValue> = {};
    for (const [name, value] of changed) {
      await notifyRealmSettingChanged(tx, realm.id, name, value, users);
      if (settings[name] !== undefined) answer[name] = answeredRealmValue(name, value);
      const group = CREATION_GROUP_OF[name];
      if (group) {
        const groupId = await groupOf(value);
        await notifyRealmSettingChanged(tx, realm.id, group, groupId, users);
        if (groupChanges.has(group)) answer[group] = groupId;
      }
    }
    const waiting = changed.get("waiting_period_threshold");
    if (waiting !== undefined) {
      await updateFullMembersInTx(tx, { ...realm, waitingPeriodThreshold: waiting as number }, deps.clock.now());
    }
    return answer;
  });
}

/** The group setting of each creation policy. */
const CREATION_GROUP_OF: Record<string, string> = Object.fromEntries(Object.entries(CHANNEL_CREATION_GROUP_SETTINGS).map(([group, policy]) => [policy, group]));

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
async function notifyRealmSettingChanged(tx: Queryable, realmId: number, name: string, value: RealmValue, users: number[]): Promise<void> {
  const shown = clientRealmValue(name, value);
  const event = UPDATE_DICT_REALM_SETTINGS.has(name) || CHANNEL_CREATION_GROUP_SETTINGS[name]
    ? { type: "realm", op: "update_dict", property: "default", data: { [name]: shown } }
    : { type: "realm", op: "update", property: name, value: shown };
  await emitEvent(tx, {
    type: "accounts.realm.updated",
    realmId,
    payload: { realm_id: realmId, property: name, value, client: { event, users } },
  });
}
