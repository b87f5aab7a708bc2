import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { ROLE } from "../lib/format";
import {
  answeredRealmValue,
  checkRealmSettingValues,
  clientRealmValue,
  realmRowValue,
  UPDATE_DICT_REALM_SETTINGS,
  type RealmValue,
} from "../lib/realm-settings";
import { lockRealm, updateRealmSettings } from "../store/realms";
import { activeUserIds } from "../store/users";
import { requireAdmin } from "./profile";
import { updateFullMembersInTx } from "./system-groups";

/**
 * PATCH /realm, as Zulip's update_realm: administrators only (some settings owners only);
 * every value is checked before anything changes; then, in one transaction, the settings whose
 * value differs are stored, each announced to every active user of the organization (Zulip's
 * do_set_realm_property). A new waiting period moves members in or out of role:fullmembers at
 * once. Answers what changed, as Zulip does.
 */
export async function doUpdateRealm(deps: AccountsDeps, who: Identity, given: Record<string, unknown>): Promise<Record<string, RealmValue>> {
  requireAdmin(who);
  const values = checkRealmSettingValues(given, who.role === ROLE.owner);
  if (!values.size) return {};
  return withTx(deps.pool, async (tx) => {
    const realm = await lockRealm(tx, who.realmId);
    if (!realm) throw badRequest("Invalid organization");
    const changed = new Map([...values].filter(([name, value]) => realmRowValue(realm, name) !== value));
    if (!changed.size) return {};
    await updateRealmSettings(tx, realm.id, changed);
    const users = await activeUserIds(tx, realm.id);
    const answer: Record<string, RealmValue> = {};
    for (const [name, value] of changed) {
      await notifyRealmSettingChanged(tx, realm.id, name, value, users);
      answer[name] = answeredRealmValue(name, value);
    }
    const waiting = changed.get("waiting_period_threshold");
    if (waiting !== undefined) {
      await updateFullMembersInTx(tx, { ...realm, waitingPeriodThreshold: waiting as number }, deps.clock.now());
    }
    return answer;
  });
}

/** The `realm` event for one changed setting, to `users`; its domain event drops cached settings. */
async function notifyRealmSettingChanged(tx: Queryable, realmId: number, name: string, value: RealmValue, users: number[]): Promise<void> {
  const shown = clientRealmValue(name, value);
  const event = UPDATE_DICT_REALM_SETTINGS.has(name)
    ? { type: "realm", op: "update_dict", property: "default", data: { [name]: shown } }
    : { type: "realm", op: "update", property: name, value: shown };
  await emitEvent(tx, {
    type: "accounts.realm.updated",
    realmId,
    payload: { realm_id: realmId, property: name, value, client: { event, users } },
  });
}
