import { badRequest, type Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { ROLE } from "../lib/format";
import { formatGroups } from "../lib/group-format";
import {
  directMemberIds,
  directSubgroupIds,
  getGroup,
  isRecursiveMember,
  listNamedGroupRefs,
  listNamedGroups,
  recursiveMemberIds,
  recursiveSubgroupIds,
  type UserGroupRow,
} from "../store/user-groups";

/** The user-group API is for members and administrators: guests and bots are refused. */
export function checkGroupsApiCaller(who: Identity): void {
  if (who.role === ROLE.guest) throw badRequest("Not allowed for guest users");
  if (who.isBot) throw badRequest("This endpoint does not accept bot requests.");
}

/** Any group of the realm (anonymous setting groups included), or "Invalid user group". */
export async function accessAnyGroup(deps: AccountsDeps, realmId: number, groupId: number): Promise<UserGroupRow> {
  const g = await getGroup(deps.pool, realmId, groupId);
  if (!g) throw badRequest("Invalid user group");
  return g;
}

/** A named group of the caller's realm; another realm's or an anonymous one is "Invalid user group". */
async function accessNamedGroup(deps: AccountsDeps, who: Identity, groupId: number): Promise<UserGroupRow> {
  checkGroupsApiCaller(who);
  const g = await getGroup(deps.pool, who.realmId, groupId);
  if (!g || g.name === null) throw badRequest("Invalid user group");
  return g;
}

export async function groupIsMember(deps: AccountsDeps, realmId: number, groupId: number, userId: number): Promise<boolean> {
  await accessAnyGroup(deps, realmId, groupId);
  return isRecursiveMember(deps.pool, realmId, groupId, userId);
}

export async function groupRecursiveMembers(deps: AccountsDeps, realmId: number, groupId: number): Promise<number[]> {
  await accessAnyGroup(deps, realmId, groupId);
  return recursiveMemberIds(deps.pool, realmId, groupId);
}

/**
 * A group's can_mention_group setting, evaluated recursively for this user. Set to role:everyone,
 * it lets anyone mention the group, the organization's system bots (in no group) too, as Zulip's
 * check_user_group_mention_allowed skips the check for that setting.
 */
export async function groupCanMention(deps: AccountsDeps, realmId: number, groupId: number, userId: number): Promise<boolean> {
  const g = await accessAnyGroup(deps, realmId, groupId);
  if (g.canMentionGroupId === null) return false;
  const setting = await getGroup(deps.pool, realmId, g.canMentionGroupId);
  if (setting?.isSystemGroup && setting.name === "role:everyone") return true;
  return isRecursiveMember(deps.pool, realmId, g.canMentionGroupId, userId);
}

/** GET /user_groups: deactivated groups only when asked for (include_deactivated_groups). */
export async function getUserGroups(deps: AccountsDeps, who: Identity, includeDeactivated: boolean) {
  checkGroupsApiCaller(who);
  return formatGroups(deps.pool, who.realmId, await listNamedGroups(deps.pool, who.realmId, undefined, includeDeactivated));
}

/**
 * Service-to-service listing of the realm's active named groups (system ones included):
 * deactivated groups cannot be mentioned nor named in a channel's settings.
 */
export async function getInternalUserGroups(deps: AccountsDeps, realmId: number) {
  return (await listNamedGroupRefs(deps.pool, realmId)).map((g) => ({ id: g.id, name: g.name, is_system_group: g.isSystemGroup }));
}

/**
 * realm_user_groups in register: same objects, readable by everyone in the realm; deactivated
 * groups only for clients with the include_deactivated_groups capability.
 */
export async function realmUserGroupsState(deps: AccountsDeps, realmId: number, includeDeactivated: boolean) {
  return formatGroups(deps.pool, realmId, await listNamedGroups(deps.pool, realmId, undefined, includeDeactivated));
}

/**
 * Membership as clients read it (here, GET /user_groups and register) counts deactivated users
 * who were members, as Zulip did before feature level 303 (we speak 267). The internal checks
 * above (permissions, mentions) count active users only.
 */
export async function getGroupMembers(deps: AccountsDeps, who: Identity, groupId: number, directOnly: boolean) {
  await accessNamedGroup(deps, who, groupId);
  return directOnly ? directMemberIds(deps.pool, who.realmId, groupId, true) : recursiveMemberIds(deps.pool, who.realmId, groupId, true);
}

export async function getGroupSubgroups(deps: AccountsDeps, who: Identity, groupId: number, directOnly: boolean) {
  await accessNamedGroup(deps, who, groupId);
  if (directOnly) return directSubgroupIds(deps.pool, who.realmId, groupId);
  return (await recursiveSubgroupIds(deps.pool, who.realmId, groupId)).filter((id) => id !== groupId);
}

export async function getIsGroupMember(deps: AccountsDeps, who: Identity, groupId: number, userId: number, directOnly: boolean) {
  await accessNamedGroup(deps, who, groupId);
  const { rows } = await deps.pool.query("SELECT is_active FROM users WHERE realm_id = $1 AND id = $2", [who.realmId, userId]);
  if (!rows[0]) throw badRequest("No such user");
  if (directOnly) return (await directMemberIds(deps.pool, who.realmId, groupId, true)).includes(userId);
  return isRecursiveMember(deps.pool, who.realmId, groupId, userId, true);
}
