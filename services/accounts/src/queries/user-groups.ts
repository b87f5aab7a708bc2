import { badRequest } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { getGroup, isRecursiveMember, recursiveMemberIds, type UserGroupRow } from "../store/user-groups";

/** Any group of the realm (anonymous setting groups included), or "Invalid user group". */
export async function accessAnyGroup(deps: AccountsDeps, realmId: number, groupId: number): Promise<UserGroupRow> {
  const g = await getGroup(deps.pool, realmId, groupId);
  if (!g) throw badRequest("Invalid user group");
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
