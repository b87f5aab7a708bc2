import { z } from "zod";
import { GroupSettingValue, UserGroup } from "../routes/user-groups";
import { defineEvent } from "./index";

/** Client events `user_group` (to every active user of the organization). */
export const UserGroupAddEvent = z.strictObject({ type: z.literal("user_group"), op: z.literal("add"), group: UserGroup });
export const UserGroupUpdateEvent = z.strictObject({
  type: z.literal("user_group"),
  op: z.literal("update"),
  group_id: z.number().int(),
  data: z.strictObject({
    name: z.string().optional(),
    description: z.string().optional(),
    can_mention_group: GroupSettingValue.optional(),
    deactivated: z.boolean().optional(),
  }),
});
/**
 * A deactivated group, as clients without the include_deactivated_groups capability get its
 * `update` with `deactivated: true` (the events service rewrites it per queue, as Zulip's Tornado does).
 */
export const UserGroupRemoveEvent = z.strictObject({ type: z.literal("user_group"), op: z.literal("remove"), group_id: z.number().int() });
export const UserGroupMembersEvent = z.strictObject({
  type: z.literal("user_group"),
  op: z.enum(["add_members", "remove_members"]),
  group_id: z.number().int(),
  user_ids: z.array(z.number().int()),
});
export const UserGroupSubgroupsEvent = z.strictObject({
  type: z.literal("user_group"),
  op: z.enum(["add_subgroups", "remove_subgroups"]),
  group_id: z.number().int(),
  direct_subgroup_ids: z.array(z.number().int()),
});

const withClient = <S extends z.ZodRawShape>(shape: S) => z.object(shape).passthrough();

/** Domain events of user groups; each carries its client event in `client`. */
export const AccountsUserGroupCreated = defineEvent("accounts.user_group.created", withClient({ group: UserGroup }));
export const AccountsUserGroupUpdated = defineEvent(
  "accounts.user_group.updated",
  withClient({ group_id: z.number().int(), data: UserGroupUpdateEvent.shape.data }),
);
/** Direct membership changed (`op` add_members / remove_members). Recursive membership may change for supergroups too. */
export const AccountsUserGroupMembersChanged = defineEvent(
  "accounts.user_group.members_changed",
  withClient({ group_id: z.number().int(), op: z.enum(["add_members", "remove_members"]), user_ids: z.array(z.number().int()) }),
);
export const AccountsUserGroupSubgroupsChanged = defineEvent(
  "accounts.user_group.subgroups_changed",
  withClient({ group_id: z.number().int(), op: z.enum(["add_subgroups", "remove_subgroups"]), subgroup_ids: z.array(z.number().int()) }),
);
