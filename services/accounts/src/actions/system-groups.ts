import { withTx, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { ROLE } from "../lib/format";
import { isFullMember } from "../lib/policy";
import { realmIdsWithWaitingPeriod, lockRealm, type RealmRow } from "../store/realms";
import { addMembers, directMembersWithJoinDates, removeMembers, systemGroupIds } from "../store/user-groups";
import type { UserRow } from "../store/users";
import { notifyMembers } from "./user-groups";

/**
 * The system group a user of each role is a direct member of, as Zulip's SYSTEM_USER_GROUP_ROLE_MAP.
 * Members sit in role:members (and also in role:fullmembers once past the waiting period); the
 * other role groups reach them as subgroups.
 */
export const ROLE_SYSTEM_GROUP: Record<number, string> = {
  [ROLE.owner]: "role:owners",
  [ROLE.administrator]: "role:administrators",
  [ROLE.moderator]: "role:moderators",
  [ROLE.member]: "role:members",
  [ROLE.guest]: "role:everyone",
};

const isFullMemberForGroup = (u: Pick<UserRow, "role" | "dateJoined">, realm: RealmRow, now: Date) =>
  u.role === ROLE.member && isFullMember(u, realm, now);

/**
 * Zulip's update_users_in_full_members_system_group: of the direct members of role:fullmembers,
 * those no longer members past the waiting period leave it; members of role:members past it who
 * are not in it join. Deactivated users count too (their memberships stay, as in Zulip). Only
 * `userIds` are looked at when given. One remove_members, then one add_members event.
 */
export async function updateFullMembersInTx(tx: Queryable, realm: RealmRow, now: Date, userIds: number[] | null = null): Promise<void> {
  const groups = await systemGroupIds(tx, realm.id);
  const fullGroup = groups["role:fullmembers"];
  const full = await directMembersWithJoinDates(tx, realm.id, fullGroup, userIds);
  const members = await directMembersWithJoinDates(tx, realm.id, groups["role:members"], userIds);
  const inFull = new Set(full.map((u) => u.id));
  const leaving = full.filter((u) => !isFullMemberForGroup(u, realm, now)).map((u) => u.id);
  const joining = members.filter((u) => !inFull.has(u.id) && isFullMemberForGroup(u, realm, now)).map((u) => u.id);
  if (leaving.length) await notifyMembers(tx, realm.id, fullGroup, "remove_members", await removeMembers(tx, realm.id, fullGroup, leaving));
  if (joining.length) await notifyMembers(tx, realm.id, fullGroup, "add_members", await addMembers(tx, realm.id, fullGroup, joining));
}

/** A new user joins their role's system group, and role:fullmembers if already past the waiting period. */
export async function addToSystemGroupsInTx(tx: Queryable, realm: RealmRow, user: UserRow, now: Date): Promise<void> {
  const group = (await systemGroupIds(tx, realm.id))[ROLE_SYSTEM_GROUP[user.role]];
  await notifyMembers(tx, realm.id, group, "add_members", await addMembers(tx, realm.id, group, [user.id]));
  if (user.role === ROLE.member) await updateFullMembersInTx(tx, realm, now, [user.id]);
}

/**
 * A role change, as Zulip's do_change_user_role: out of the old role's group, into the new one's
 * (remove_members, then add_members), then role:fullmembers follows when either role is member.
 */
export async function moveSystemGroupsInTx(tx: Queryable, realm: RealmRow, userId: number, oldRole: number, newRole: number, now: Date): Promise<void> {
  const groups = await systemGroupIds(tx, realm.id);
  const from = groups[ROLE_SYSTEM_GROUP[oldRole]];
  const to = groups[ROLE_SYSTEM_GROUP[newRole]];
  await notifyMembers(tx, realm.id, from, "remove_members", await removeMembers(tx, realm.id, from, [userId]));
  await notifyMembers(tx, realm.id, to, "add_members", await addMembers(tx, realm.id, to, [userId]));
  if (oldRole === ROLE.member || newRole === ROLE.member) await updateFullMembersInTx(tx, realm, now, [userId]);
}

/**
 * Zulip's promote_new_full_members (a daily cron there): in organizations with a waiting period,
 * members whose period ended join role:fullmembers (and a period lengthened outside the API takes
 * effect). One transaction per organization, under its lock (role changes take it too), so
 * replicas may run it at the same time.
 */
export async function doPromoteNewFullMembers(deps: AccountsDeps): Promise<void> {
  for (const realmId of await realmIdsWithWaitingPeriod(deps.pool)) {
    await withTx(deps.pool, async (tx) => {
      const realm = await lockRealm(tx, realmId);
      if (realm && !realm.deactivated && realm.waitingPeriodThreshold > 0) await updateFullMembersInTx(tx, realm, deps.clock.now());
    });
  }
}
