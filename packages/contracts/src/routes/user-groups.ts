import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/** A group-setting value: a group id, or an anonymous set of users and subgroups. */
export const GroupSettingValue = z.union([
  z.number().int(),
  z.strictObject({ direct_members: z.array(z.number().int()), direct_subgroups: z.array(z.number().int()) }),
]);
export type GroupSettingValue = z.infer<typeof GroupSettingValue>;

/** A user group as clients see it (spec 2.6, feature level 267). */
export const UserGroup = z.strictObject({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  members: z.array(z.number().int()),
  direct_subgroup_ids: z.array(z.number().int()),
  is_system_group: z.boolean(),
  can_mention_group: GroupSettingValue,
  /** Zulip 10 (feature level 290): deactivated groups reach only clients that ask for them. */
  deactivated: z.boolean(),
});
export type UserGroup = z.infer<typeof UserGroup>;

const ids = z.array(z.number().int());

export const CreateUserGroup = route({
  method: "POST",
  path: "/user_groups/create",
  service: "accounts",
  auth: "user",
  params: {
    name: p.str().required(),
    description: p.str().required(),
    members: p.json(ids).required(),
    can_mention_group: p.json(GroupSettingValue).alias("can_mention_group_id"),
  },
  response: empty,
});

export const GetUserGroups = route({
  method: "GET",
  path: "/user_groups",
  service: "accounts",
  auth: "user",
  // Named allow_deactivated at feature levels 290-293.
  params: { include_deactivated_groups: p.bool().default(false).alias("allow_deactivated") },
  response: success({ user_groups: z.array(UserGroup) }),
});

/** Rename, describe, or change who may mention the group. */
export const UpdateUserGroup = route({
  method: "PATCH",
  path: "/user_groups/{user_group_id}",
  service: "accounts",
  auth: "user",
  params: {
    user_group_id: p.int().path(),
    name: p.str(),
    description: p.str(),
    can_mention_group: p.json(
      z.strictObject({ new: GroupSettingValue, old: GroupSettingValue.optional() }).or(GroupSettingValue.transform((v) => ({ new: v, old: undefined }))),
    ),
  },
  response: empty,
});

export const UpdateUserGroupMembers = route({
  method: "POST",
  path: "/user_groups/{user_group_id}/members",
  service: "accounts",
  auth: "user",
  params: { user_group_id: p.int().path(), add: p.json(ids), delete: p.json(ids) },
  response: empty,
});

export const UpdateUserGroupSubgroups = route({
  method: "POST",
  path: "/user_groups/{user_group_id}/subgroups",
  service: "accounts",
  auth: "user",
  params: { user_group_id: p.int().path(), add: p.json(ids), delete: p.json(ids) },
  response: empty,
});

export const GetUserGroupMembers = route({
  method: "GET",
  path: "/user_groups/{user_group_id}/members",
  service: "accounts",
  auth: "user",
  params: { user_group_id: p.int().path(), direct_member_only: p.bool().default(false) },
  response: success({ members: ids }),
});

export const GetUserGroupSubgroups = route({
  method: "GET",
  path: "/user_groups/{user_group_id}/subgroups",
  service: "accounts",
  auth: "user",
  params: { user_group_id: p.int().path(), direct_subgroup_only: p.bool().default(false) },
  response: success({ subgroups: ids }),
});

export const GetIsUserGroupMember = route({
  method: "GET",
  path: "/user_groups/{user_group_id}/members/{user_id}",
  service: "accounts",
  auth: "user",
  params: { user_group_id: p.int().path(), user_id: p.int().path(), direct_member_only: p.bool().default(false) },
  response: success({ is_user_group_member: z.boolean() }),
});

/**
 * Zulip 9's deletion of a group (feature levels below 294), served as a deactivation: clients that
 * did not declare include_deactivated_groups, as every client of that level, see the group removed.
 */
export const DeleteUserGroup = route({
  method: "DELETE",
  path: "/user_groups/{user_group_id}",
  service: "accounts",
  auth: "user",
  params: { user_group_id: p.int().path() },
  response: empty,
});

/** Zulip 10 (feature level 290): a deactivated group keeps its members but serves no purpose. */
export const DeactivateUserGroup = route({
  method: "POST",
  path: "/user_groups/{user_group_id}/deactivate",
  service: "accounts",
  auth: "user",
  params: { user_group_id: p.int().path() },
  response: empty,
});
