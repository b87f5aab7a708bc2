import type { StateContext } from "./register-state";
import { realmUserGroupsState } from "./user-groups";
import { userStatusState } from "./user-status";

/** State of the issue-5 resources: user groups, status, linkifiers. */
export async function registerStateExtras(ctx: StateContext): Promise<Record<string, unknown>> {
  const state: Record<string, unknown> = {};
  if (ctx.wants("realm_user_groups")) state.realm_user_groups = await realmUserGroupsState(ctx.deps, ctx.realm.id);
  if (ctx.wants("user_status")) state.user_status = await userStatusState(ctx.deps, ctx.realm.id);
  return state;
}
