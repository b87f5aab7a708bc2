import type { ApplyContext, State } from "./types";

const DAY_MS = 86_400_000;

/** The user's role from register's own-user flags (Zulip's role values). */
function ownRole(state: State): number {
  if (state.is_owner) return 100;
  if (state.is_admin) return 200;
  if (state.is_moderator) return 300;
  if (state.is_guest) return 600;
  return 400;
}

/**
 * The own permissions register derives from the organization's policies (can_create_streams and
 * the like), recomputed after a realm setting changed, as Zulip's apply_event does: from the
 * own-user role flags, the own join date in realm_users and the realm_* policies. Only when
 * register fetched both the realm and the own user.
 */
export function recomputeOwnPermissions(state: State, ctx: ApplyContext, now = Date.now()): void {
  if (!("can_create_streams" in state) || !("realm_create_public_stream_policy" in state)) return;
  const role = ownRole(state);
  const me = Array.isArray(state.realm_users) ? state.realm_users.find((u: any) => u.user_id === ctx.userId) : undefined;
  const joined = me ? Date.parse(me.date_joined) : now;
  const fullMember = role <= 300 || (role === 400 && (now - joined) / DAY_MS >= state.realm_waiting_period_threshold);
  // Zulip's common policies: 1 members, 2 administrators, 3 full members, 4 moderators, 5 everyone.
  const can = (policy: number) =>
    policy === 5 || (policy === 1 && role !== 600) || (policy === 2 && role <= 200) || (policy === 3 && fullMember) || (policy === 4 && role <= 300);
  // Web-public channels have their own enum: 2 administrators, 4 moderators, 6 nobody, 7 owners.
  const webPublic = state.realm_create_web_public_stream_policy;
  const canWebPublic = (webPublic === 7 && role === 100) || (webPublic === 2 && role <= 200) || (webPublic === 4 && role <= 300);
  state.can_create_public_streams = can(state.realm_create_public_stream_policy);
  state.can_create_private_streams = can(state.realm_create_private_stream_policy);
  state.can_create_streams = state.can_create_public_streams || state.can_create_private_streams;
  state.can_create_web_public_streams = state.realm_enable_spectator_access === true && canWebPublic;
  state.can_subscribe_other_users = can(state.realm_invite_to_stream_policy);
  state.can_invite_others_to_realm = state.realm_invite_to_realm_policy !== 6 && can(state.realm_invite_to_realm_policy);
}
