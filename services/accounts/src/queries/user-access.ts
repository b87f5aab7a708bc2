import { badRequest, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { ROLE } from "../lib/format";
import { messagingOf } from "../lib/messaging-client";
import { getRealm, type RealmRow } from "../store/realms";
import { activeAudience, activeGuestIds } from "../store/users";

/**
 * Limited user access (Zulip's can_access_all_users_group, feature level 225). The setting is
 * role:everyone or role:members, so only guests are ever limited: with role:members a guest
 * accesses the users who share a channel subscription or a direct message conversation with
 * them (messaging knows those), every bot, and themselves. Everyone else accesses every user.
 */

/** Whether the organization limits its guests' access to users. */
export function limitsGuests(realm: Pick<RealmRow, "canAccessAllUsersGroup">): boolean {
  return realm.canAccessAllUsersGroup !== "role:everyone";
}

/** Zulip's check_user_can_access_all_users. */
export function canAccessAllUsers(realm: Pick<RealmRow, "canAccessAllUsersGroup">, viewer: { role: number }): boolean {
  return viewer.role !== ROLE.guest || !limitsGuests(realm);
}

/**
 * The humans `viewer` accesses (bots are always accessible, callers know them), or null when the
 * viewer accesses every user. One call to messaging.
 */
export async function accessibleUserIds(deps: AccountsDeps, realm: RealmRow, viewer: { id: number; role: number }): Promise<Set<number> | null> {
  if (canAccessAllUsers(realm, viewer)) return null;
  const ids = await messagingOf(deps).conversationPartners(realm.id, viewer.id);
  ids.add(viewer.id);
  return ids;
}

/** Whether `viewer` accesses `target` (Zulip's check_can_access_user). */
export async function canAccessUser(deps: AccountsDeps, realm: RealmRow, viewer: { id: number; role: number }, target: { id: number; isBot: boolean }): Promise<boolean> {
  if (target.isBot || target.id === viewer.id) return true;
  return (await accessibleUserIds(deps, realm, viewer))?.has(target.id) ?? true;
}

/**
 * The guests of an organization that limits them who do not access `target`, or none: the users
 * that `realm_user` events about the target must not reach. Sharing a channel or a conversation
 * goes both ways, so one call to messaging answers for every guest.
 */
export async function guestsDeniedAccess(db: Queryable, deps: AccountsDeps, realmId: number, target: { id: number; isBot: boolean }): Promise<Set<number>> {
  if (target.isBot) return new Set();
  const realm = await getRealm(db, realmId);
  if (!realm || !limitsGuests(realm)) return new Set();
  return deniedAmong(deps, realmId, target, await activeGuestIds(db, realmId));
}

/** Which of `guests` do not access `target`: one call to messaging, none without guests. */
async function deniedAmong(deps: AccountsDeps, realmId: number, target: { id: number }, guests: number[]): Promise<Set<number>> {
  const others = guests.filter((id) => id !== target.id);
  if (others.length === 0) return new Set();
  const partners = await messagingOf(deps).conversationPartners(realmId, target.id);
  return new Set(others.filter((id) => !partners.has(id)));
}

/** `audience` without the guests who may not hear about `target` (see guestsDeniedAccess). */
export async function audienceWithAccess(db: Queryable, deps: AccountsDeps, realmId: number, target: { id: number; isBot: boolean }, audience: number[]): Promise<number[]> {
  const denied = await guestsDeniedAccess(db, deps, realmId, target);
  return denied.size ? audience.filter((id) => !denied.has(id)) : audience;
}

/**
 * The active users who may hear of `target` in realm-wide events (presence, user_status):
 * everyone active but the guests an organization that limits them keeps from the target. Where
 * guests are not limited this is the one statement activeUserIds would be.
 */
export async function activeUsersAccessing(db: Queryable, deps: AccountsDeps, realmId: number, target: { id: number; isBot: boolean }): Promise<number[]> {
  const { userIds, guestIds, canAccessAllUsersGroup } = await activeAudience(db, realmId);
  if (target.isBot || !limitsGuests({ canAccessAllUsersGroup })) return userIds;
  const denied = await deniedAmong(deps, realmId, target, guestIds);
  return denied.size ? userIds.filter((id) => !denied.has(id)) : userIds;
}

/**
 * Refuses a guest of an organization that limits guests a user they do not access (Zulip's
 * check_can_access_user), with Zulip's text for the endpoint: "Insufficient permission" where it
 * reads a user, "No such user" where it mutes one. Nobody else costs a query.
 */
export async function checkCanAccessUser(deps: AccountsDeps, who: Identity, target: { id: number; isBot: boolean }, msg: string): Promise<void> {
  if (who.role !== ROLE.guest || target.isBot || target.id === who.userId) return;
  const realm = await getRealm(deps.pool, who.realmId);
  if (realm && !(await canAccessUser(deps, realm, { id: who.userId, role: who.role }, target))) throw badRequest(msg);
}
