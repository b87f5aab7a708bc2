import { INCOMING_WEBHOOK_INTEGRATIONS } from "@chat/contracts";
import type { StateContext } from "./register-state";
import { getLinkifiers } from "./linkifiers";
import { getPlaygrounds } from "./playgrounds";
import { getRealmDomains } from "./realm-domains";
import { realmUserGroupsState } from "./user-groups";
import { userStatusState } from "./user-status";

/** State of the issue-5 resources: user groups, status, linkifiers; code playgrounds and email domains. */
export async function registerStateExtras(ctx: StateContext): Promise<Record<string, unknown>> {
  const state: Record<string, unknown> = {};
  // Clients that cannot read url_template get an empty list rather than a form they misread.
  const linkifiers = ctx.wants("realm_linkifiers") && ctx.capabilities.linkifier_url_template;
  const [groups, status, linkifierList, playgrounds, domains] = await Promise.all([
    ctx.wants("realm_user_groups") ? realmUserGroupsState(ctx.deps, ctx.realm.id, ctx.capabilities.include_deactivated_groups === true) : null,
    ctx.wants("user_status") ? ctx.accessible().then((accessible) => userStatusState(ctx.deps, ctx.realm.id, accessible)) : null,
    linkifiers ? getLinkifiers(ctx.deps, ctx.realm.id) : [],
    ctx.wants("realm_playgrounds") ? getPlaygrounds(ctx.deps.pool, ctx.realm.id) : null,
    ctx.wants("realm_domains") ? getRealmDomains(ctx.deps.pool, ctx.realm.id) : null,
  ]);
  if (ctx.wants("realm_user_groups")) state.realm_user_groups = groups;
  if (ctx.wants("user_status")) state.user_status = status;
  if (ctx.wants("realm_linkifiers")) state.realm_linkifiers = linkifierList;
  if (ctx.wants("realm_filters")) state.realm_filters = [];
  if (ctx.wants("realm_playgrounds")) state.realm_playgrounds = playgrounds;
  if (ctx.wants("realm_domains")) state.realm_domains = domains;
  if (ctx.wants("realm_incoming_webhook_bots")) state.realm_incoming_webhook_bots = INCOMING_WEBHOOK_INTEGRATIONS;
  // What this server has none of, said as Zulip says it: no embedded bot kinds to offer, no Zoom
  // account linked, no GIPHY key, no onboarding hints of Zulip's web app left to show (feature
  // level 233's replacement of hotspots).
  if (ctx.wants("realm_embedded_bots")) state.realm_embedded_bots = [];
  if (ctx.wants("video_calls")) state.has_zoom_token = false;
  if (ctx.wants("giphy")) state.giphy_api_key = "";
  if (ctx.wants("onboarding_steps")) state.onboarding_steps = [];
  return state;
}
