import { recomputeOwnPermissions } from "./own-permissions";
import { fetched, sortedUnique, upsert, type Applier, type AppliedEvent, type ApplyContext, type State } from "./types";

// Events carry full avatar URLs; clients that compute gravatars keep null (as register gives),
// only for users whose API email is their real one (email visible to everyone): a Gravatar
// computed from a dummy address would be wrong, so the others keep the URL.
const isGravatar = (url: unknown) => typeof url === "string" && url.startsWith("https://secure.gravatar.com/");
const computable = (ctx: ApplyContext, url: unknown, user: { email?: unknown; delivery_email?: unknown }) =>
  ctx.clientGravatar && isGravatar(url) && user.email === user.delivery_email;

const ROLE_FLAGS = (role: number) => ({ is_owner: role === 100, is_admin: role <= 200, is_guest: role === 600 });

function realmUser(state: State, event: AppliedEvent, ctx: ApplyContext): boolean {
  if (!fetched(ctx, "realm_user")) return false;
  if (!Array.isArray(state.realm_users)) return true;
  const person = event.person;
  const byId = (a: any, b: any) => a.user_id - b.user_id;
  switch (event.op) {
    case "add":
      if (computable(ctx, person.avatar_url, person)) person.avatar_url = null;
      state.realm_non_active_users = (state.realm_non_active_users ?? []).filter((u: any) => u.user_id !== person.user_id);
      upsert(state.realm_users, "user_id", person);
      state.realm_users.sort(byId);
      return true;
    case "remove":
      // Without user_list_incomplete the user becomes Zulip's "Unknown user" stand-in, built by
      // accounts: left to the client, as a fresh register would show it.
      // With it, the user is left out whether active or not (a deactivated one on a role change).
      if (!ctx.userListIncomplete) return false;
      forgetUser(state, person.user_id, ctx);
      return true;
    case "update": {
      const user = [...state.realm_users, ...(state.realm_non_active_users ?? [])].find((u: any) => u.user_id === person.user_id);
      if (!user) return true;
      if ("custom_profile_field" in person) {
        // A value (with its rendering for text fields), or null when it was removed.
        const { id, value, rendered_value } = person.custom_profile_field;
        if (!user.profile_data) return true;
        if (value === null) delete user.profile_data[String(id)];
        else user.profile_data[String(id)] = rendered_value === undefined ? { value } : { value, rendered_value };
        return true;
      }
      // The own-user keys keep the URL (register gives it there whatever client_gravatar says).
      const listed = computable(ctx, person.avatar_url, user) ? { ...person, avatar_url: null } : person;
      for (const [k, v] of Object.entries(listed)) {
        if (k === "new_email") user.email = v;
        // Only the user object's own keys (avatar_source and avatar_url_medium are own-user state).
        else if (k !== "user_id" && k in user) user[k] = v;
      }
      // An address change sends the new Gravatar before the new API email: once both addresses
      // agree again, the client computes it, as a fresh register leaves it null.
      if (("new_email" in person || "delivery_email" in person) && computable(ctx, user.avatar_url, user)) user.avatar_url = null;
      if ("role" in person) Object.assign(user, ROLE_FLAGS(person.role));
      if ("is_active" in person) {
        state.realm_users = state.realm_users.filter((u: any) => u.user_id !== user.user_id);
        state.realm_non_active_users = (state.realm_non_active_users ?? []).filter((u: any) => u.user_id !== user.user_id);
        (person.is_active ? state.realm_users : state.realm_non_active_users).push(user);
        state.realm_users.sort(byId);
        state.realm_non_active_users.sort(byId);
      }
      if (person.user_id === ctx.userId) {
        for (const k of ["full_name", "delivery_email", "avatar_source", "avatar_url", "avatar_url_medium", "is_billing_admin", "timezone"]) {
          if (k in person && k in state) state[k] = person[k];
        }
        if ("new_email" in person && "email" in state) state.email = person.new_email;
        // A new role: the own-user flags, and the permissions that follow from the role and the
        // organization's policies (Zulip's apply_event does the same).
        if ("role" in person && "is_admin" in state) {
          Object.assign(state, ROLE_FLAGS(person.role), { is_moderator: person.role === 300 });
          recomputeOwnPermissions(state, ctx);
        }
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * A user the guest lost access to leaves the state as a fresh register leaves them out: the user
 * lists, the statuses, and the presences where user access limits presence (keyed by id, or in
 * the legacy form by the API email the user list holds).
 */
function forgetUser(state: State, userId: number, ctx: ApplyContext): void {
  const listed = [...state.realm_users, ...(state.realm_non_active_users ?? [])].find((u: any) => u.user_id === userId);
  state.realm_users = state.realm_users.filter((u: any) => u.user_id !== userId);
  if (state.realm_non_active_users) state.realm_non_active_users = state.realm_non_active_users.filter((u: any) => u.user_id !== userId);
  if (state.user_status && typeof state.user_status === "object") delete state.user_status[String(userId)];
  if (!ctx.accessLimitsPresence || state.presences === null || typeof state.presences !== "object") return;
  if (ctx.slimPresence) delete state.presences[String(userId)];
  else if (typeof listed?.email === "string") delete state.presences[listed.email];
}

function userGroup(state: State, event: AppliedEvent, ctx: ApplyContext): boolean {
  if (!fetched(ctx, "realm_user_groups")) return false;
  if (!Array.isArray(state.realm_user_groups)) return true;
  const groups = state.realm_user_groups as any[];
  const group = groups.find((g) => g.id === event.group_id);
  switch (event.op) {
    case "add":
      upsert(groups, "id", event.group);
      groups.sort((a, b) => a.id - b.id);
      return true;
    case "remove":
      state.realm_user_groups = groups.filter((g) => g.id !== event.group_id);
      return true;
    case "update":
      if (group) Object.assign(group, event.data);
      return true;
    case "add_members":
    case "remove_members":
      if (group) {
        group.members = event.op === "add_members"
          ? sortedUnique([...group.members, ...event.user_ids])
          : group.members.filter((id: number) => !event.user_ids.includes(id));
      }
      return true;
    case "add_subgroups":
    case "remove_subgroups":
      if (group) {
        group.direct_subgroup_ids = event.op === "add_subgroups"
          ? sortedUnique([...group.direct_subgroup_ids, ...event.direct_subgroup_ids])
          : group.direct_subgroup_ids.filter((id: number) => !event.direct_subgroup_ids.includes(id));
      }
      return true;
    default:
      return false;
  }
}

function userStatus(state: State, event: AppliedEvent, ctx: ApplyContext): boolean {
  if (!fetched(ctx, "user_status")) return false;
  if (!state.user_status) return true;
  const key = String(event.user_id);
  const status: Record<string, unknown> = { ...(state.user_status[key] ?? {}) };
  if ("away" in event) {
    if (event.away) status.away = true;
    else delete status.away;
  }
  if ("status_text" in event) {
    if (event.status_text) status.status_text = event.status_text;
    else delete status.status_text;
  }
  if ("emoji_name" in event) {
    if (event.emoji_name) Object.assign(status, { emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type });
    else for (const k of ["emoji_name", "emoji_code", "reaction_type"]) delete status[k];
  }
  if (Object.keys(status).length) state.user_status[key] = status;
  else delete state.user_status[key];
  return true;
}

function setting(state: State, property: string, value: unknown): void {
  if (state.user_settings && property in state.user_settings) state.user_settings[property] = value;
  // Turning drafts synchronization off deletes the server's drafts without drafts events (Zulip).
  if (property === "enable_drafts_synchronization" && value === false && Array.isArray(state.drafts)) state.drafts = [];
  // Legacy clients have the settings at the top level.
  if (property in state) state[property] = value;
}

export const accountAppliers: Record<string, Applier> = {
  realm_user: realmUser,
  user_group: userGroup,
  user_status: userStatus,

  realm(state, event, ctx) {
    if (!fetched(ctx, "realm")) return false;
    if (event.op === "update") state[`realm_${event.property}`] = event.value;
    else if (event.op === "update_dict") for (const [k, v] of Object.entries(event.data ?? {})) state[`realm_${k}`] = v;
    else return false;
    // The deprecated jitsi_server_url is the one calls use: the organization's, else the server's.
    if (event.op === "update" && event.property === "jitsi_server_url") state.jitsi_server_url = state.realm_jitsi_server_url ?? state.server_jitsi_server_url;
    recomputeOwnPermissions(state, ctx);
    return true;
  },

  realm_linkifiers(state, event, ctx) {
    if (!fetched(ctx, "realm_linkifiers")) return false;
    if (Array.isArray(state.realm_linkifiers)) state.realm_linkifiers = event.realm_linkifiers;
    return true;
  },

  realm_playgrounds(state, event, ctx) {
    if (!fetched(ctx, "realm_playgrounds")) return false;
    // The whole list rides in every event.
    if (Array.isArray(state.realm_playgrounds)) state.realm_playgrounds = event.realm_playgrounds;
    return true;
  },

  realm_domains(state, event, ctx) {
    if (!fetched(ctx, "realm_domains")) return false;
    if (!Array.isArray(state.realm_domains)) return true;
    // As Zulip's apply_event, by domain; an add seen twice (in the state and the queue) stays one.
    if (event.op === "add") upsert(state.realm_domains, "domain", event.realm_domain);
    else if (event.op === "change") Object.assign(state.realm_domains.find((d: any) => d.domain === event.realm_domain.domain) ?? {}, event.realm_domain);
    else if (event.op === "remove") state.realm_domains = state.realm_domains.filter((d: any) => d.domain !== event.domain);
    else return false;
    return true;
  },

  user_settings(state, event, ctx) {
    if (!fetched(ctx, "user_settings") && !fetched(ctx, "update_display_settings") && !fetched(ctx, "update_global_notifications")) return false;
    if (event.op !== "update") return false;
    setting(state, event.property, event.value);
    return true;
  },

  update_display_settings(state, event) {
    setting(state, event.setting_name, event.setting);
    return true;
  },

  update_global_notifications(state, event) {
    setting(state, event.notification_name, event.setting);
    return true;
  },

  realm_user_settings_defaults(state, event, ctx) {
    if (!fetched(ctx, "realm_user_settings_defaults")) return false;
    if (event.op !== "update") return false;
    if (state.realm_user_settings_defaults) state.realm_user_settings_defaults[event.property] = event.value;
    return true;
  },

  custom_profile_fields(state, event, ctx) {
    if (!fetched(ctx, "custom_profile_fields")) return false;
    if (Array.isArray(state.custom_profile_fields)) state.custom_profile_fields = event.fields;
    // Values of a deleted field disappear with it.
    const ids = new Set((event.fields as Array<{ id: number }>).map((f) => String(f.id)));
    for (const u of [...(state.realm_users ?? []), ...(state.realm_non_active_users ?? [])]) {
      for (const k of Object.keys(u.profile_data ?? {})) if (!ids.has(k)) delete u.profile_data[k];
    }
    return true;
  },

  realm_bot(state, event, ctx) {
    if (!fetched(ctx, "realm_bot")) return false;
    if (!Array.isArray(state.realm_bots)) return true;
    const bots = state.realm_bots as any[];
    const bot = bots.find((b) => b.user_id === event.bot.user_id);
    switch (event.op) {
      // A bot seen twice (in the state and the queue) stays one; by id, as register lists them.
      case "add":
        upsert(bots, "user_id", event.bot);
        bots.sort((a, b) => a.user_id - b.user_id);
        return true;
      case "update":
        if (bot) Object.assign(bot, event.bot);
        return true;
      case "delete":
        state.realm_bots = bots.filter((b) => b.user_id !== event.bot.user_id);
        return true;
      // Deactivation before feature level 222 (no longer sent): the bot stays, inactive, as in Zulip's apply_event.
      case "remove":
        if (bot) bot.is_active = false;
        return true;
      default:
        return false;
    }
  },

  alert_words(state, event, ctx) {
    if (!fetched(ctx, "alert_words")) return false;
    if (Array.isArray(state.alert_words)) state.alert_words = event.alert_words;
    return true;
  },

  muted_users(state, event, ctx) {
    if (!fetched(ctx, "muted_users")) return false;
    if (Array.isArray(state.muted_users)) state.muted_users = event.muted_users;
    return true;
  },
};
