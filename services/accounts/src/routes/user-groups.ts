import {
  CreateUserGroup,
  DeactivateUserGroup,
  DeleteUserGroup,
  GetIsUserGroupMember,
  GetUserGroupMembers,
  GetUserGroups,
  GetUserGroupSubgroups,
  UpdateUserGroup,
  UpdateUserGroupMembers,
  UpdateUserGroupSubgroups,
} from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doDeactivateUserGroup } from "../actions/user-group-deactivation";
import { doCreateUserGroup, doUpdateGroupMembers, doUpdateSubgroups, doUpdateUserGroup } from "../actions/user-groups";
import type { AccountsDeps } from "../deps";
import { getGroupMembers, getGroupSubgroups, getIsGroupMember, getUserGroups } from "../queries/user-groups";

export function userGroupRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, CreateUserGroup, async ({ identity, params }) => {
    await doCreateUserGroup(deps, identity, {
      name: params.name,
      description: params.description,
      members: params.members,
      canMentionGroup: params.can_mention_group,
    });
    return {};
  });

  registerRoute(app, GetUserGroups, async ({ identity, params }) => ({
    user_groups: await getUserGroups(deps, identity, params.include_deactivated_groups),
  }));

  registerRoute(app, DeactivateUserGroup, async ({ identity, params }) => {
    await doDeactivateUserGroup(deps, identity, params.user_group_id);
    return {};
  });
  registerRoute(app, DeleteUserGroup, async ({ identity, params }) => {
    await doDeactivateUserGroup(deps, identity, params.user_group_id);
    return {};
  });

  registerRoute(app, UpdateUserGroup, async ({ identity, params }) => {
    await doUpdateUserGroup(deps, identity, params.user_group_id, {
      name: params.name,
      description: params.description,
      canMentionGroup: params.can_mention_group,
    });
    return {};
  });

  registerRoute(app, UpdateUserGroupMembers, async ({ identity, params }) => {
    await doUpdateGroupMembers(deps, identity, params.user_group_id, params.add, params.delete);
    return {};
  });

  registerRoute(app, UpdateUserGroupSubgroups, async ({ identity, params }) => {
    await doUpdateSubgroups(deps, identity, params.user_group_id, params.add, params.delete);
    return {};
  });

  registerRoute(app, GetUserGroupMembers, async ({ identity, params }) => ({
    members: await getGroupMembers(deps, identity, params.user_group_id, params.direct_member_only),
  }));

  registerRoute(app, GetUserGroupSubgroups, async ({ identity, params }) => ({
    subgroups: await getGroupSubgroups(deps, identity, params.user_group_id, params.direct_subgroup_only),
  }));

  registerRoute(app, GetIsUserGroupMember, async ({ identity, params }) => ({
    is_user_group_member: await getIsGroupMember(deps, identity, params.user_group_id, params.user_id, params.direct_member_only),
  }));
}
