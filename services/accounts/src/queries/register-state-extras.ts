import type { StateContext } from "./register-state";
import { getLinkifiers } from "./linkifiers";
import { realmUserGroupsState } from "./user-groups";
import { userStatusState } from "./user-status";

/** State of the issue-5 resources: user groups, status, linkifiers. */
export async function registerStateExtras(ctx: StateContext): Promise<Record<string, unknown>> {
  const state: Record<string, unknown> = {};
  if (ctx.wants("realm_user_groups")) state.realm_user_groups = await realmUserGroupsState(ctx.deps, ctx.realm.id);
  if (ctx.wants("user_status")) state.user_status = await userStatusState(ctx.deps, ctx.realm.id);
  if (ctx.wants("realm_linkifiers")) {
    // Clients that cannot read url_template get an empty list rather than a form they misread.
    state.realm_linkifiers = ctx.capabilities.linkifier_url_template ? await getLinkifiers(ctx.deps, ctx.realm.id) : [];
  }
  if (ctx.wants("realm_filters")) state.realm_filters = [];
  return state;
}
