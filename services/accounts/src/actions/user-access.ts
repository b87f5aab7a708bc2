import { INACCESSIBLE_USER_NAME, type PresenceEvent } from "@chat/contracts";
import { emitEvent, withTx, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { ROLE, userObject } from "../lib/format";
import { messagingOf } from "../lib/messaging-client";
import { PRESENCE_HISTORY_LIMIT_DAYS, presenceEvent } from "../lib/presence";
import { userViewFor } from "../queries/profile";
import { limitsGuests } from "../queries/user-access";
import { formatStatus } from "../queries/user-status";
import { listRealmPresence } from "../store/presence";
import { getRealm, type RealmRow } from "../store/realms";
import { listStatuses } from "../store/user-status";
import { activeGuestIds, getUser, getUsersByIds, listRealmUsers } from "../store/users";

type AccessPairs = Array<{ user_id: number; user_ids: number[] }>;
type AccessChange = { gained: AccessPairs; lost: AccessPairs };

/** Messaging changed which users some guests access (channel subscriptions, in an organization that limits guests). */
export async function doNotifyUserAccessChanged(deps: AccountsDeps, realmId: number, change: AccessChange): Promise<void> {
  await withTx(deps.pool, (tx) => notifyUserAccessChangedInTx(tx, deps, realmId, change));
}

/**
 * Each user still active gets, one event per user as Zulip sends them, the users they gained
 * as `realm_user` / add, as they may see them (Zulip's
 * send_user_creation_events_on_adding_subscriptions), each followed by their presence and status
 * as a fresh register would now show them, and the users they lost as `realm_user` / remove
 * under the stand-in's name (send_user_remove_events_on_removing_subscriptions). A lost user's
 * presence and status need nothing more: the remove is all Zulip sends, and its clients forget
 * whom they no longer access. Deactivated users are left out, as Zulip counts only active
 * subscribers there, unless `deactivated` (a role or setting change, after which a fresh
 * register lists or leaves out deactivated users too): a lost one is removed, a gained one added
 * and then deactivated, the two events a client already knows.
 */
export async function notifyUserAccessChangedInTx(tx: Queryable, deps: AccountsDeps, realmId: number, change: AccessChange, deactivated = false): Promise<void> {
  for (const { user_id: guestId, user_ids: userIds } of change.gained) {
    const guest = await getUser(tx, realmId, guestId);
    if (!guest?.isActive || userIds.length === 0) continue;
    const view = await userViewFor(tx, realmId, guest, { profileData: true });
    const users = (await getUsersByIds(tx, realmId, userIds)).filter((u) => u.isActive || deactivated);
    const { presences, statuses } = await presenceAndStatusOf(tx, deps, realmId, users.filter((u) => u.isActive).map((u) => u.id));
    for (const u of users) {
      const person = view(u, userObject(u, { clientGravatar: false }));
      await notifyGuest(tx, realmId, guestId, { type: "realm_user", op: "add", person });
      if (!u.isActive) await notifyGuest(tx, realmId, guestId, { type: "realm_user", op: "update", person: { user_id: u.id, is_active: false } });
      const presence = presences.get(u.id);
      if (presence) await notifyGuest(tx, realmId, guestId, presence);
      const status = statuses.get(u.id);
      if (status) await notifyGuest(tx, realmId, guestId, { type: "user_status", user_id: u.id, ...status });
    }
  }
  for (const { user_id: guestId, user_ids: userIds } of change.lost) {
    if (!(await getUser(tx, realmId, guestId))?.isActive) continue;
    for (const u of await getUsersByIds(tx, realmId, userIds)) {
      if (!u.isActive && !deactivated) continue;
      await notifyGuest(tx, realmId, guestId, { type: "realm_user", op: "remove", person: { user_id: u.id, full_name: INACCESSIBLE_USER_NAME } });
    }
  }
}

/**
 * What a first register shows of these active users' presence (where it follows user access,
 * CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE, and the organization shows presence: those connected
 * within the default history) and status (the non-default ones), as client events by user: a
 * guest who gains access to them learns it without registering again. Presence polls would not
 * bring it, as they ask only for what changed since the client's last update.
 */
async function presenceAndStatusOf(tx: Queryable, deps: AccountsDeps, realmId: number, userIds: number[]) {
  const presences = new Map<number, PresenceEvent>();
  const statuses = new Map<number, Record<string, unknown>>();
  if (userIds.length === 0) return { presences, statuses };
  if (deps.config.CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE && !(await getRealm(tx, realmId))?.presenceDisabled) {
    const now = deps.clock.now();
    const connectedSince = new Date(now.getTime() - PRESENCE_HISTORY_LIMIT_DAYS * 86_400_000);
    for (const row of await listRealmPresence(tx, realmId, { userIds, connectedSince })) presences.set(row.userId, presenceEvent(row, now));
  }
  for (const s of await listStatuses(tx, realmId, userIds)) statuses.set(s.userId, formatStatus(s));
  return { presences, statuses };
}

/**
 * A user became a guest of an organization that limits guests, or stopped being one: they lose,
 * or gain, every human they share no channel or conversation with, deactivated ones too (a
 * member's register lists those, a limited guest's does not), so that their clients agree with a
 * fresh register. Other users' access does not change: it never depends on the role of whom it
 * is about.
 */
export async function notifyRoleAccessChangedInTx(
  tx: Queryable,
  deps: AccountsDeps,
  realm: RealmRow,
  user: { id: number; isBot: boolean; isActive: boolean },
  before: number,
  after: number,
): Promise<void> {
  if (user.isBot || !user.isActive || !limitsGuests(realm) || (before === ROLE.guest) === (after === ROLE.guest)) return;
  const unshared = await unsharedUsersInTx(tx, deps, realm.id, [user.id]);
  await notifyUserAccessChangedInTx(tx, deps, realm.id, after === ROLE.guest ? { gained: [], lost: unshared } : { gained: unshared, lost: [] }, true);
}

/**
 * The organization started or stopped limiting its guests (can_access_all_users_group): each
 * active guest loses, or gains, every human they share nothing with (deactivated ones too, as on
 * a role change). Zulip's API names no event for this; here guests learn it as they learn any
 * change of access, so that their clients agree with a fresh register.
 */
export async function notifyAccessSettingChangedInTx(tx: Queryable, deps: AccountsDeps, realm: RealmRow, limitedBefore: boolean): Promise<void> {
  if (limitedBefore === limitsGuests(realm)) return;
  const guests = await activeGuestIds(tx, realm.id);
  if (guests.length === 0) return;
  const unshared = await unsharedUsersInTx(tx, deps, realm.id, guests);
  await notifyUserAccessChangedInTx(tx, deps, realm.id, limitedBefore ? { gained: unshared, lost: [] } : { gained: [], lost: unshared }, true);
}

/**
 * For each of `userIds`, the humans other than them, deactivated ones too, with whom they share
 * no channel or conversation (messaging knows).
 */
async function unsharedUsersInTx(tx: Queryable, deps: AccountsDeps, realmId: number, userIds: number[]): Promise<AccessPairs> {
  const humans = (await listRealmUsers(tx, realmId)).filter((u) => !u.isBot).map((u) => u.id);
  const out: AccessPairs = [];
  for (const id of userIds) {
    const partners = await messagingOf(deps).conversationPartners(realmId, id);
    out.push({ user_id: id, user_ids: humans.filter((h) => h !== id && !partners.has(h)) });
  }
  return out;
}

async function notifyGuest(tx: Queryable, realmId: number, guestId: number, event: Record<string, unknown> & { type: string }): Promise<void> {
  await emitEvent(tx, { type: "accounts.user_access.changed", realmId, payload: { user_id: guestId, client: { event, users: [guestId] } } });
}
