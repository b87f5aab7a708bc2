import type { GroupSettingValue, UserGroup } from "@chat/contracts";
import type { Queryable } from "@chat/platform";
import { directContents, getGroupsByIds, type UserGroupWithMembers } from "../store/user-groups";

/**
 * Renders group settings the way clients read them: a named group as its id, an anonymous
 * group as `{direct_members, direct_subgroups}`.
 */
export async function settingValues(db: Queryable, realmId: number, settingGroupIds: number[]): Promise<Map<number, GroupSettingValue>> {
  const unique = [...new Set(settingGroupIds)];
  const out = new Map<number, GroupSettingValue>();
  if (!unique.length) return out;
  const groups = await getGroupsByIds(db, realmId, unique);
  const anonymous = groups.filter((g) => g.name === null).map((g) => g.id);
  const contents = anonymous.length ? await directContents(db, realmId, anonymous) : new Map();
  for (const g of groups) {
    if (g.name !== null) out.set(g.id, g.id);
    else {
      const c = contents.get(g.id) ?? { members: [], subgroups: [] };
      out.set(g.id, { direct_members: c.members, direct_subgroups: c.subgroups });
    }
  }
  return out;
}

export async function formatGroups(db: Queryable, realmId: number, groups: UserGroupWithMembers[]): Promise<UserGroup[]> {
  const settings = await settingValues(db, realmId, groups.map((g) => g.canMentionGroupId).filter((id): id is number => id !== null));
  return groups.map((g) => ({
    id: g.id,
    name: g.name ?? "",
    description: g.description,
    members: g.members,
    direct_subgroup_ids: g.directSubgroupIds,
    is_system_group: g.isSystemGroup,
    can_mention_group: g.canMentionGroupId !== null ? (settings.get(g.canMentionGroupId) ?? g.canMentionGroupId) : 0,
    deactivated: g.deactivated,
  }));
}
