import { INACCESSIBLE_USER_NAME } from "@chat/contracts";
import { emitEvent, withTx, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { ROLE, userObject } from "../lib/format";
import { messagingOf } from "../lib/messaging-client";
import { userViewFor } from "../queries/profile";
import { limitsGuests } from "../queries/user-access";
import type { RealmRow } from "../store/realms";
import { activeGuestIds, getUser, getUsersByIds, listRealmUsers } from "../store/users";

type AccessPairs = Array<{ user_id: number; user_ids: number[] }>;

/** Messaging changed which users some guests access (channel subscriptions, in an organization that limits guests). */
export async function doNotifyUserAccessChanged(deps: AccountsDeps, realmId: number, change: { gained: AccessPairs; lost: AccessPairs }): Promise<void> {
  await withTx(deps.pool, (tx) => notifyUserAccessChangedInTx(tx, realmId, change));
}

/**
 * Each user still active gets, one event per user as Zulip sends them, the users they gained
 * as `realm_user` / add, as they may see them (Zulip's
 * send_user_creation_events_on_adding_subscriptions), and the users they lost as `realm_user` /
 * remove under the stand-in's name (send_user_remove_events_on_removing_subscriptions).
 * Deactivated users are left out: Zulip counts only active subscribers there. Delivering twice
 * does no harm: clients apply both as upserts.
 */
export async function notifyUserAccessChangedInTx(tx: Queryable, realmId: number, change: { gained: AccessPairs; lost: AccessPairs }): Promise<void> {
  for (const { user_id: guestId, user_ids: userIds } of change.gained) {
    const guest = await getUser(tx, realmId, guestId);
    if (!guest?.isActive || userIds.length === 0) continue;
    const view = await userViewFor(tx, realmId, guest, { profileData: true });
    for (const u of await getUsersByIds(tx, realmId, userIds)) {
      if (!u.isActive) continue;
      const person = view(u, userObject(u, { clientGravatar: false }));
      await notifyGuest(tx, realmId, guestId, { type: "realm_user", op: "add", person });
    }
  }
  for (const { user_id: guestId, user_ids: userIds } of change.lost) {
    if (!(await getUser(tx, realmId, guestId))?.isActive) continue;
    for (const u of await getUsersByIds(tx, realmId, userIds)) {
      if (!u.isActive) continue;
      await notifyGuest(tx, realmId, guestId, { type: "realm_user", op: "remove", person: { user_id: u.id, full_name: INACCESSIBLE_USER_NAME } });
    }
  }
}

/**
 * A user became a guest of an organization that limits guests, or stopped being one: they lose,
 * or gain, every active human they share no channel or conversation with, so that their clients
 * agree with a fresh register. Other users' access does not change: it never depends on the
 * role of whom it is about.
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
  await notifyUserAccessChangedInTx(tx, realm.id, after === ROLE.guest ? { gained: [], lost: unshared } : { gained: unshared, lost: [] });
}

/**
 * The organization started or stopped limiting its guests (can_access_all_users_group): each
 * active guest loses, or gains, every active human they share nothing with. Zulip's API names no
 * event for this; here guests learn it as they learn any change of access, so that their clients
 * agree with a fresh register.
 */
export async function notifyAccessSettingChangedInTx(tx: Queryable, deps: AccountsDeps, realm: RealmRow, limitedBefore: boolean): Promise<void> {
  if (limitedBefore === limitsGuests(realm)) return;
  const guests = await activeGuestIds(tx, realm.id);
  if (guests.length === 0) return;
  const unshared = await unsharedUsersInTx(tx, deps, realm.id, guests);
  await notifyUserAccessChangedInTx(tx, realm.id, limitedBefore ? { gained: unshared, lost: [] } : { gained: [], lost: unshared });
}

/** For each of `userIds`, the active humans other than them with whom they share no channel or conversation (messaging knows). */
async function unsharedUsersInTx(tx: Queryable, deps: AccountsDeps, realmId: number, userIds: number[]): Promise<AccessPairs> {
  const humans = (await listRealmUsers(tx, realmId)).filter((u) => u.isActive && !u.isBot).map((u) => u.id);
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
