import { ApiError, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { messagingOf } from "../lib/messaging-client";
import { activeGroupsMentionableBy, activeNamedSupergroupIds, anonymousSupergroupIds, setGroupDeactivated } from "../store/user-groups";
import { accessGroupForUpdate, checkUserGroupEditPolicy, notifyGroup } from "./user-groups";

export type GroupUseObjection =
  | { type: "subgroup"; supergroup_ids: number[] }
  | { type: "channel"; channel_id: number; settings: string[] }
  | { type: "user_group"; group_id: number; settings: string[] };

/**
 * Where the group is still in use, as Zulip's access_user_group_for_deactivation lists it: as a
 * direct subgroup of an active named group, and in the settings of channels and of other active
 * groups, named directly or inside an anonymous group. The organization's group settings are
 * fixed system groups here, which cannot be deactivated, so they never object.
 */
async function groupUseObjections(tx: Queryable, deps: AccountsDeps, realmId: number, groupId: number): Promise<GroupUseObjection[]> {
  const objections: GroupUseObjection[] = [];
  const supergroups = await activeNamedSupergroupIds(tx, realmId, groupId);
  if (supergroups.length) objections.push({ type: "subgroup", supergroup_ids: supergroups });
  const settingGroups = [groupId, ...(await anonymousSupergroupIds(tx, realmId, groupId))];
  for (const c of await messagingOf(deps).channelsUsingGroups(realmId, settingGroups)) {
    objections.push({ type: "channel", channel_id: c.channel_id, settings: c.settings });
  }
  for (const id of await activeGroupsMentionableBy(tx, realmId, settingGroups, groupId)) {
    objections.push({ type: "user_group", group_id: id, settings: ["can_mention_group"] });
  }
  return objections;
}

/**
 * POST /user_groups/{id}/deactivate (Zulip 10, feature level 290): whoever may change the group
 * (never a system group; not one already deactivated), if nothing uses it
 * (CANNOT_DEACTIVATE_GROUP_IN_USE with the objections, feature level 298). The group keeps its
 * members. Everyone gets the user_group update `{deactivated: true}`; the events service turns it
 * into a `remove` for clients without the include_deactivated_groups capability.
 */
export async function doDeactivateUserGroup(deps: AccountsDeps, who: Identity, groupId: number): Promise<void> {
  await checkUserGroupEditPolicy(deps, who);
  await withTx(deps.pool, async (tx) => {
    // Subgroup changes take this lock too, so none can add the group while it is checked.
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('accounts.subgroups'), $1::int)", [who.realmId]);
    await accessGroupForUpdate(tx, who, groupId);
    const objections = await groupUseObjections(tx, deps, who.realmId, groupId);
    if (objections.length) throw new ApiError("CANNOT_DEACTIVATE_GROUP_IN_USE", "Cannot deactivate user group in use.", { extra: { objections } });
    await setGroupDeactivated(tx, who.realmId, groupId, true);
    const data = { deactivated: true };
    await notifyGroup(tx, who.realmId, "accounts.user_group.updated", { group_id: groupId, data }, { type: "user_group", op: "update", group_id: groupId, data });
  });
}
