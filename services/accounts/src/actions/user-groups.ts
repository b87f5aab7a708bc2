import type { GroupSettingValue } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { formatGroups, settingValues } from "../lib/group-format";
import { ROLE } from "../lib/format";
import { exceeds } from "../lib/validate";
import {
  addMembers,
  addSubgroups,
  directMemberIds,
  directSubgroupIds,
  getGroupsByIds,
  groupNameTaken,
  insertGroup,
  isDirectMember,
  listNamedGroups,
  lockGroup,
  recursiveSubgroupIds,
  removeMembers,
  removeSubgroups,
  setCanMentionGroup,
  shareLockGroups,
  systemGroupIds,
  type UserGroupRow,
} from "../store/user-groups";
import { activeUserIds, getUser, getUsersByIds } from "../store/users";
import { getRealm } from "../store/realms";
import { policyAllows } from "../lib/policy";
import { checkGroupsApiCaller } from "../queries/user-groups";

const MAX_NAME = 100;
const MAX_DESCRIPTION = 1024;
/** Prefixes Zulip reserves: system groups (`role:`) and mention or narrow syntax that would read the name as something else. */
const RESERVED_NAME_PREFIXES = ["@", "role:", "user:", "stream:", "channel:"];

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name) throw badRequest("User group name cannot be empty.");
  if (exceeds(name, MAX_NAME)) throw badRequest(`User group name cannot exceed ${MAX_NAME} characters.`);
  const reserved = RESERVED_NAME_PREFIXES.find((prefix) => name.startsWith(prefix));
  if (reserved) throw badRequest(`User group name cannot start with '${reserved}'.`);
  return name;
}

function checkDescription(d: string): string {
  if (exceeds(d, MAX_DESCRIPTION)) throw badRequest(`description is too long (limit: ${MAX_DESCRIPTION} characters)`);
  return d;
}

/**
 * Users of the realm with these ids (active ones only, unless `allowDeactivated`), or "Invalid
 * user ID: n" for the first one that is not, as Zulip's user_ids_to_users.
 */
async function checkActiveUsers(tx: Queryable, realmId: number, ids: number[], opts: { allowDeactivated?: boolean } = {}): Promise<number[]> {
  const unique = [...new Set(ids)];
  const found = await getUsersByIds(tx, realmId, unique);
  const ok = new Set(found.filter((u) => (u.isActive || opts.allowDeactivated) && !u.isSystemBot).map((u) => u.id));
  for (const id of unique) if (!ok.has(id)) throw badRequest(`Invalid user ID: ${id}`);
  return unique;
}

const DEACTIVATED = "User group is deactivated.";

/**
 * Named groups of the realm with these ids, or "Invalid user group ID: n". Groups to be used (as
 * subgroups, in a setting) are share-locked and must be active: deactivating one waits.
 */
async function checkNamedGroups(tx: Queryable, realmId: number, ids: number[], opts: { forUse: boolean }): Promise<UserGroupRow[]> {
  const unique = [...new Set(ids)];
  const found = opts.forUse ? await shareLockGroups(tx, realmId, unique) : await getGroupsByIds(tx, realmId, unique);
  const byId = new Map(found.filter((g) => g.name !== null).map((g) => [g.id, g]));
  for (const id of unique) if (!byId.has(id)) throw badRequest(`Invalid user group ID: ${id}`);
  if (opts.forUse && found.some((g) => g.deactivated)) throw badRequest(DEACTIVATED);
  return unique.map((id) => byId.get(id)!);
}

const FORBIDDEN_MENTION_SETTING = ["role:internet", "role:owners"];

/**
 * Resolves a can_mention_group value to a group id: a named group (not internet/owners), or a
 * new anonymous group holding the given users and subgroups.
 */
async function resolveMentionSetting(tx: Queryable, deps: AccountsDeps, realmId: number, given: GroupSettingValue): Promise<number> {
  const value = await normalizeSetting(tx, realmId, given);
  const forbidden = (g: UserGroupRow) => {
    if (g.isSystemGroup && FORBIDDEN_MENTION_SETTING.includes(g.name!)) {
      throw badRequest(`'can_mention_group' setting cannot be set to '${g.name}' group.`);
    }
  };
  if (typeof value === "number") {
    const [g] = await shareLockGroups(tx, realmId, [value]);
    if (!g || g.name === null) throw badRequest("Invalid user group");
    if (g.deactivated) throw badRequest(DEACTIVATED);
    forbidden(g);
    return g.id;
  }
  const members = await checkActiveUsers(tx, realmId, value.direct_members);
  const subgroups = await checkNamedGroups(tx, realmId, value.direct_subgroups, { forUse: true });
  // Nor may those groups stand inside a set: it would reach the same users.
  subgroups.forEach(forbidden);
  const anon = await insertGroup(tx, { realmId, name: null, description: "", isSystemGroup: false, canMentionGroupId: null, creatorId: null, now: deps.clock.now() });
  await addMembers(tx, realmId, anon.id, members);
  await addSubgroups(tx, realmId, anon.id, subgroups.map((g) => g.id));
  return anon.id;
}

/** As Zulip's parse_group_setting_value: a set of exactly one group is that group, an empty set role:nobody. */
async function normalizeSetting(tx: Queryable, realmId: number, value: GroupSettingValue): Promise<GroupSettingValue> {
  if (typeof value === "number" || value.direct_members.length > 0 || value.direct_subgroups.length > 1) return value;
  return value.direct_subgroups[0] ?? (await systemGroupIds(tx, realmId))["role:nobody"];
}

/** As Zulip's are_both_group_setting_values_equal: the same group, or the same members and subgroups in any order. */
function sameSetting(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === "number" || typeof b === "number") return a === b;
  const sameSet = (x: number[], y: number[]) => {
    const xs = new Set(x);
    const ys = new Set(y);
    return xs.size === ys.size && [...xs].every((v) => ys.has(v));
  };
  return sameSet(a.direct_members, b.direct_members) && sameSet(a.direct_subgroups, b.direct_subgroups);
}

/**
 * The group, locked for a change, if the caller may change it: never a system group; admins and
 * moderators any other; members only one they directly belong to. Creating a group gives no
 * right to it: Zulip 9 (before feature level 305's can_manage_group) has no creator exception.
 * A deactivated group only where `allowDeactivated` (renaming, describing), as Zulip's
 * access_user_group_for_update.
 */
export async function accessGroupForUpdate(tx: Queryable, who: Identity, groupId: number, opts: { allowDeactivated?: boolean } = {}): Promise<UserGroupRow> {
  checkGroupsApiCaller(who);
  const g = await lockGroup(tx, who.realmId, groupId);
  if (!g || g.name === null) throw badRequest("Invalid user group");
  if (g.deactivated && !opts.allowDeactivated) throw badRequest(DEACTIVATED);
  if (g.isSystemGroup) throw badRequest("Insufficient permission");
  if (who.role <= ROLE.moderator) return g;
  if (!(await isDirectMember(tx, who.realmId, groupId, who.userId))) throw badRequest("Insufficient permission");
  return g;
}

/**
 * Zulip's require_user_group_edit_permission: members and administrators (checkGroupsApiCaller)
 * whom the organization's user_group_edit_policy allows ("Insufficient permission"), before
 * anything else of a request that creates or changes a group.
 */
export async function checkUserGroupEditPolicy(deps: AccountsDeps, who: Identity): Promise<void> {
  checkGroupsApiCaller(who);
  const [realm, user] = await Promise.all([getRealm(deps.pool, who.realmId), getUser(deps.pool, who.realmId, who.userId)]);
  if (!realm || !user || !policyAllows(realm.userGroupEditPolicy, user, realm, deps.clock.now())) throw badRequest("Insufficient permission");
}

/** A user_group event to everyone active in the organization (only to queues with `capability`, when given). */
export async function notifyGroup(tx: Queryable, realmId: number, type: string, payload: Record<string, unknown>, event: Record<string, unknown>, capability?: string) {
  const users = await activeUserIds(tx, realmId);
  await emitEvent(tx, { type, realmId, payload: { ...payload, client: { event, users, ...(capability ? { capability } : {}) } } });
}

export async function doCreateUserGroup(
  deps: AccountsDeps,
  who: Identity,
  p: { name: string; description: string; members: number[]; canMentionGroup?: GroupSettingValue },
): Promise<number> {
  await checkUserGroupEditPolicy(deps, who);
  const name = checkName(p.name);
  const description = checkDescription(p.description);
  return withTx(deps.pool, async (tx) => {
    const members = await checkActiveUsers(tx, who.realmId, p.members);
    if (await groupNameTaken(tx, who.realmId, name)) throw badRequest(`User group '${name}' already exists.`);
    const mention =
      p.canMentionGroup !== undefined
        ? await resolveMentionSetting(tx, deps, who.realmId, p.canMentionGroup)
        : (await systemGroupIds(tx, who.realmId))["role:everyone"];
    let group: UserGroupRow;
    try {
      group = await insertGroup(tx, { realmId: who.realmId, name, description, isSystemGroup: false, canMentionGroupId: mention, creatorId: who.userId, now: deps.clock.now() });
    } catch (err) {
      if ((err as { code?: string }).code === "23505") throw badRequest(`User group '${name}' already exists.`);
      throw err;
    }
    await addMembers(tx, who.realmId, group.id, members);
    const [formatted] = await formatGroups(tx, who.realmId, await listNamedGroups(tx, who.realmId, [group.id]));
    await notifyGroup(tx, who.realmId, "accounts.user_group.created", { group: formatted }, { type: "user_group", op: "add", group: formatted });
    return group.id;
  });
}

export async function doUpdateUserGroup(
  deps: AccountsDeps,
  who: Identity,
  groupId: number,
  p: { name?: string; description?: string; canMentionGroup?: { new: GroupSettingValue; old?: GroupSettingValue } },
): Promise<void> {
  await checkUserGroupEditPolicy(deps, who);
  if (p.name === undefined && p.description === undefined && p.canMentionGroup === undefined) throw badRequest("No new data supplied");
  await withTx(deps.pool, async (tx) => {
    const group = await accessGroupForUpdate(tx, who, groupId, { allowDeactivated: true });
    // One update event per changed field, in Zulip's order (name, description, setting): Zulip
    // changes and announces each on its own.
    const changes: Array<Record<string, unknown>> = [];
    if (p.name !== undefined) {
      const name = checkName(p.name);
      if (name !== group.name) {
        if (await groupNameTaken(tx, who.realmId, name)) throw badRequest(`User group '${name}' already exists.`);
        // Another group renamed (or created) to this name at once passed the same check: the
        // unique name refuses the second, with the answer the check gives.
        await tx.query("UPDATE user_groups SET name = $3 WHERE realm_id = $1 AND id = $2", [who.realmId, groupId, name]).catch((err: unknown) => {
          if ((err as { code?: string }).code === "23505") throw badRequest(`User group '${name}' already exists.`);
          throw err;
        });
        changes.push({ name });
      }
    }
    if (p.description !== undefined) {
      const description = checkDescription(p.description);
      if (description !== group.description) {
        await tx.query("UPDATE user_groups SET description = $3 WHERE realm_id = $1 AND id = $2", [who.realmId, groupId, description]);
        changes.push({ description });
      }
    }
    if (p.canMentionGroup !== undefined) {
      const current = group.canMentionGroupId !== null ? (await settingValues(tx, who.realmId, [group.canMentionGroupId])).get(group.canMentionGroupId) : undefined;
      const { old } = p.canMentionGroup;
      if (old !== undefined && (current === undefined || !sameSetting(await normalizeSetting(tx, who.realmId, old), current))) {
        throw badRequest("'old' value does not match the expected value.");
      }
      // As in Zulip, the value it already has changes nothing and sends no event.
      if (current === undefined || !sameSetting(await normalizeSetting(tx, who.realmId, p.canMentionGroup.new), current)) {
        const settingId = await resolveMentionSetting(tx, deps, who.realmId, p.canMentionGroup.new);
        await setCanMentionGroup(tx, who.realmId, groupId, settingId);
        changes.push({ can_mention_group: (await settingValues(tx, who.realmId, [settingId])).get(settingId) });
      }
    }
    for (const data of changes) {
      // A deactivated group's new name only reaches clients that list deactivated groups (Zulip's Tornado).
      const capability = group.deactivated && "name" in data ? "include_deactivated_groups" : undefined;
      await notifyGroup(tx, who.realmId, "accounts.user_group.updated", { group_id: groupId, data }, { type: "user_group", op: "update", group_id: groupId, data }, capability);
    }
  });
}

export async function doUpdateGroupMembers(deps: AccountsDeps, who: Identity, groupId: number, add: number[] = [], remove: number[] = []): Promise<void> {
  await checkUserGroupEditPolicy(deps, who);
  if (!add.length && !remove.length) throw badRequest("Nothing to do. Specify at least one of 'add' or 'delete'.");
  await withTx(deps.pool, async (tx) => {
    await accessGroupForUpdate(tx, who, groupId);
    // Deactivated members count: they are listed (before Zulip's feature level 303), so they can be removed.
    const current = new Set(await directMemberIds(tx, who.realmId, groupId, true));
    if (add.length) {
      const ids = await checkActiveUsers(tx, who.realmId, add);
      for (const id of ids) if (current.has(id)) throw badRequest(`User ${id} is already a member of this group`);
    }
    // As in Zulip, the additions happen first: a user added by this request may also be removed.
    // Ids to remove must be users of the organization (deactivated ones too) before anything else.
    const afterAdding = new Set([...current, ...add]);
    const removing = await checkActiveUsers(tx, who.realmId, remove, { allowDeactivated: true });
    for (const id of removing) if (!afterAdding.has(id)) throw badRequest(`There is no member '${id}' in this user group`);
    if (add.length) {
      const added = await addMembers(tx, who.realmId, groupId, [...new Set(add)]);
      await notifyMembers(tx, who.realmId, groupId, "add_members", added);
    }
    if (removing.length) {
      const removed = await removeMembers(tx, who.realmId, groupId, removing);
      await notifyMembers(tx, who.realmId, groupId, "remove_members", removed);
    }
  });
}

/** user_group add_members / remove_members to everyone active in the organization (nothing for no users). */
export async function notifyMembers(tx: Queryable, realmId: number, groupId: number, op: "add_members" | "remove_members", userIds: number[]) {
  if (!userIds.length) return;
  await notifyGroup(tx, realmId, "accounts.user_group.members_changed", { group_id: groupId, op, user_ids: userIds }, { type: "user_group", op, group_id: groupId, user_ids: userIds });
}

export async function doUpdateSubgroups(deps: AccountsDeps, who: Identity, groupId: number, add: number[] = [], remove: number[] = []): Promise<void> {
  await checkUserGroupEditPolicy(deps, who);
  if (!add.length && !remove.length) throw badRequest("Nothing to do. Specify at least one of 'add' or 'delete'.");
  await withTx(deps.pool, async (tx) => {
    // Serializes subgroup changes in the realm so two concurrent additions cannot form a cycle.
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('accounts.subgroups'), $1::int)", [who.realmId]);
    await accessGroupForUpdate(tx, who, groupId);
    const current = new Set(await directSubgroupIds(tx, who.realmId, groupId));
    const adding = await checkNamedGroups(tx, who.realmId, add, { forUse: true });
    const removing = await checkNamedGroups(tx, who.realmId, remove, { forUse: false });
    // System groups may be subgroups (Zulip checks only a subgroup's organization); no cycle can
    // pass through one, since no group can be added to a system group.
    for (const g of adding) if (current.has(g.id)) throw badRequest(`User group ${g.id} is already a subgroup of this group.`);
    // The additions happen first, as for members.
    const afterAdding = new Set([...current, ...adding.map((g) => g.id)]);
    for (const g of removing) if (!afterAdding.has(g.id)) throw badRequest(`User group ${g.id} is not a subgroup of this group.`);
    // A cycle would appear if this group is (or is below) one of the groups being added.
    for (const g of adding) {
      const below = await recursiveSubgroupIds(tx, who.realmId, g.id);
      if (below.includes(groupId)) throw badRequest(`User group ${groupId} is already a subgroup of one of the passed subgroups.`);
    }
    if (adding.length) {
      const ids = adding.map((g) => g.id);
      await addSubgroups(tx, who.realmId, groupId, ids);
      await notifySubgroups(tx, who.realmId, groupId, "add_subgroups", ids);
    }
    if (removing.length) {
      const ids = removing.map((g) => g.id);
      await removeSubgroups(tx, who.realmId, groupId, ids);
      await notifySubgroups(tx, who.realmId, groupId, "remove_subgroups", ids);
    }
  });
}

async function notifySubgroups(tx: Queryable, realmId: number, groupId: number, op: "add_subgroups" | "remove_subgroups", ids: number[]) {
  await notifyGroup(tx, realmId, "accounts.user_group.subgroups_changed", { group_id: groupId, op, subgroup_ids: ids }, {
    type: "user_group",
    op,
    group_id: groupId,
    direct_subgroup_ids: ids,
  });
}
