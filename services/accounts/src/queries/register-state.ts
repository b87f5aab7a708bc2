import { PASSWORD_MIN_LENGTH } from "../lib/credentials";
import { DEFAULT_LOGO_PATH, EMOJI_DATA_PATH, MAX_STREAM_DESCRIPTION_LENGTH, MAX_STREAM_NAME_LENGTH } from "@chat/contracts";
import { badRequest, JsonText, organizationUrl, SUCCESS_PREFIX, type Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { inaccessibleUserObject, ROLE } from "../lib/format";
import { POLICY, policyAllows } from "../lib/policy";
import { getRealm, type RealmRow } from "../store/realms";
import { systemGroupIds } from "../store/user-groups";
import { settingGroupName } from "../lib/realm-settings";
import { getUser, type UserRow } from "../store/users";
import { REALM_AUTHENTICATION_METHODS } from "../lib/authentication-methods";
import { registerStateExtras } from "./register-state-extras";
import { getMutedUsers } from "./muted-users";
import { avatarUrl, realmIconUrl } from "../lib/avatar";
import { EXTERNAL_ACCOUNT_SUBTYPES } from "../lib/profile-fields";
import { settingsRegisterState } from "./settings";
import { userListJson, userListsOf, type LimitedView } from "./user-list";
import { accessibleUserIds } from "./user-access";
import { presenceRegisterState } from "./presence";
import { realmBotsState } from "./bots";

export interface RegisterStateParams {
  fetch_event_types: string[] | null | undefined;
  client_capabilities: Record<string, unknown>;
  client_gravatar: boolean;
  slim_presence?: boolean;
  presence_history_limit_days?: number;
}

/** The Jitsi Meet server calls use unless an organization names its own (Zulip's default JITSI_SERVER_URL). */
const SERVER_JITSI_URL = "https://meet.jit.si";

/** When this process started: Zulip's `server_generation` tells clients the server restarted. */
const SERVER_GENERATION = Math.floor(Date.now() / 1000);

export interface StateContext {
  deps: AccountsDeps;
  who: Identity;
  me: UserRow;
  realm: RealmRow;
  wants: (type: string) => boolean;
  capabilities: Record<string, unknown>;
  clientGravatar: boolean;
  /** The humans a guest the organization limits accesses (null: every user), asked of messaging once per register. */
  accessible: () => Promise<Set<number> | null>;
}

/** A member of the state that is JSON already (the user lists), put into the answer as it is. */
class RawJson {
  constructor(readonly text: string) {}
}

/** The accounts-owned slice of POST /register's initial state, for the requested event types. */
export async function getRegisterState(deps: AccountsDeps, who: Identity, p: RegisterStateParams): Promise<JsonText> {
  const types = p.fetch_event_types;
  const wants = (t: string) => types === null || types === undefined || types.includes(t);
  const [me, realm] = await Promise.all([getUser(deps.pool, who.realmId, who.userId), getRealm(deps.pool, who.realmId)]);
  if (!me || !realm) throw badRequest("No such user");
  let accessible: Promise<Set<number> | null> | undefined;
  const ctx: StateContext = {
    deps,
    who,
    me,
    realm,
    wants,
    capabilities: p.client_capabilities,
    clientGravatar: p.client_gravatar,
    accessible: () => (accessible ??= accessibleUserIds(deps, realm, me)),
  };
  // The parts read in parallel (each on its own pooled connection), merged in this order.
  const parts = await Promise.all([
    wants("realm") ? realmState(ctx) : {},
    wants("realm_user") ? realmUserState(ctx) : {},
    // user_settings (+ legacy flattened keys), realm_user_settings_defaults, alert_words, custom_profile_fields.
    settingsRegisterState({ db: deps.pool, me, wants, capabilities: p.client_capabilities }),
    registerStateExtras(ctx),
    wants("presence") ? presenceRegisterState(deps, who, p, ctx.accessible) : {},
    wants("muted_users") ? getMutedUsers(deps.pool, who.realmId, who.userId).then((muted_users) => ({ muted_users })) : {},
    wants("realm_bot") ? realmBotsState(deps, me) : {},
  ]);
  return stateJson(Object.assign({}, ...parts) as Record<string, unknown>);
}

function stateJson(state: Record<string, unknown>): JsonText {
  let text = SUCCESS_PREFIX;
  for (const [key, value] of Object.entries(state)) {
    if (value === undefined) continue;
    text += `,${JSON.stringify(key)}:${value instanceof RawJson ? value.text : JSON.stringify(value)}`;
  }
  return new JsonText(`${text}}`);
}

/**
 * What each group setting may be set to (Zulip 8.0's server_supported_permission_settings, in
 * the form of feature level 267): the realm's, a channel's and a user group's settings this
 * server has, with the limits Zulip 9.0 puts on them.
 */
function permissionSetting(name: string, o: { system: boolean; nobody: boolean; everyone: boolean; default: string; forSystem?: string; allowed?: string[] }) {
  return {
    require_system_group: o.system,
    allow_internet_group: false,
    allow_owners_group: false,
    allow_nobody_group: o.nobody,
    allow_everyone_group: o.everyone,
    default_group_name: o.default,
    id_field_name: `${name}_id`,
    default_for_system_groups: o.forSystem ?? null,
    allowed_system_groups: o.allowed ?? [],
  };
}
const SUPPORTED_PERMISSION_SETTINGS = {
  realm: {
    create_multiuse_invite_group: permissionSetting("create_multiuse_invite_group", { system: true, nobody: true, everyone: false, default: "role:administrators" }),
    can_access_all_users_group: permissionSetting("can_access_all_users_group", {
      system: true,
      nobody: false,
      everyone: true,
      default: "role:everyone",
      allowed: ["role:everyone", "role:members"],
    }),
    can_create_public_channel_group: permissionSetting("can_create_public_channel_group", { system: true, nobody: false, everyone: false, default: "role:members" }),
    can_create_private_channel_group: permissionSetting("can_create_private_channel_group", { system: true, nobody: false, everyone: false, default: "role:members" }),
  },
  stream: {
    can_remove_subscribers_group: permissionSetting("can_remove_subscribers_group", { system: true, nobody: false, everyone: true, default: "role:administrators" }),
  },
  group: {
    can_mention_group: permissionSetting("can_mention_group", { system: false, nobody: true, everyone: true, default: "role:everyone", forSystem: "role:nobody" }),
  },
};

/** The ratings an administrator may choose for GIPHY (`realm_giphy_rating`), by Zulip's names. */
const GIPHY_RATING_OPTIONS = {
  disabled: { name: "GIPHY integration disabled", id: 0 },
  y: { name: "Allow GIFs rated Y (Very young audience)", id: 1 },
  g: { name: "Allow GIFs rated G (General audience)", id: 2 },
  pg: { name: "Allow GIFs rated PG (Parental guidance)", id: 3 },
  "pg-13": { name: "Allow GIFs rated PG-13 (Parental guidance - under 13)", id: 4 },
  r: { name: "Allow GIFs rated R (Restricted)", id: 5 },
};

async function realmState(ctx: StateContext): Promise<Record<string, unknown>> {
  const { realm, deps } = ctx;
  const url = organizationUrl(deps.config, realm.stringId);
  const groups = await systemGroupIds(deps.pool, realm.id);
  return {
    realm_name: realm.name,
    realm_description: realm.description,
    realm_date_created: Math.floor(realm.dateCreated.getTime() / 1000),
    realm_url: url,
    realm_uri: url,
    // No uploads of icons or logos: Gravatar's identicon, and the server's own logo (the gateway serves it).
    realm_icon_url: realmIconUrl(realm.id),
    realm_icon_source: "G",
    realm_logo_url: `${url}${DEFAULT_LOGO_PATH}`,
    realm_logo_source: "D",
    realm_night_logo_url: `${url}${DEFAULT_LOGO_PATH}`,
    realm_night_logo_source: "D",
    realm_bot_domain: `${realm.stringId}.invalid`,
    realm_invite_required: realm.inviteRequired,
    realm_invite_to_realm_policy: realm.inviteToRealmPolicy,
    realm_invite_to_stream_policy: realm.inviteToStreamPolicy,
    realm_wildcard_mention_policy: realm.wildcardMentionPolicy,
    realm_create_public_stream_policy: realm.createPublicStreamPolicy,
    realm_create_private_stream_policy: realm.createPrivateStreamPolicy,
    realm_can_create_public_channel_group: groups[settingGroupName("can_create_public_channel_group", realm.createPublicStreamPolicy)],
    realm_can_create_private_channel_group: groups[settingGroupName("can_create_private_channel_group", realm.createPrivateStreamPolicy)],
    realm_create_web_public_stream_policy: realm.createWebPublicStreamPolicy,
    realm_waiting_period_threshold: realm.waitingPeriodThreshold,
    realm_message_retention_days: realm.messageRetentionDays ?? -1,
    realm_mandatory_topics: realm.mandatoryTopics,
    realm_enable_spectator_access: realm.enableSpectatorAccess,
    realm_allow_message_editing: realm.allowMessageEditing,
    realm_message_content_edit_limit_seconds: realm.messageContentEditLimitSeconds,
    realm_message_content_delete_limit_seconds: realm.messageContentDeleteLimitSeconds,
    realm_edit_topic_policy: realm.editTopicPolicy,
    realm_move_messages_between_streams_policy: realm.moveMessagesBetweenStreamsPolicy,
    realm_delete_own_message_policy: realm.deleteOwnMessagePolicy,
    realm_private_message_policy: realm.privateMessagePolicy,
    realm_move_messages_within_stream_limit_seconds: realm.moveMessagesWithinStreamLimitSeconds,
    realm_move_messages_between_streams_limit_seconds: realm.moveMessagesBetweenStreamsLimitSeconds,
    realm_allow_edit_history: realm.allowEditHistory,
    realm_bot_creation_policy: realm.botCreationPolicy,
    realm_add_custom_emoji_policy: realm.addCustomEmojiPolicy,
    realm_user_group_edit_policy: realm.userGroupEditPolicy,
    realm_default_language: realm.defaultLanguage,
    realm_digest_emails_enabled: realm.digestEmailsEnabled,
    realm_digest_weekday: realm.digestWeekday,
    realm_disallow_disposable_email_addresses: realm.disallowDisposableEmailAddresses,
    realm_email_changes_disabled: realm.emailChangesDisabled,
    realm_name_changes_disabled: realm.nameChangesDisabled,
    realm_avatar_changes_disabled: realm.avatarChangesDisabled,
    realm_emails_restricted_to_domains: realm.emailsRestrictedToDomains,
    realm_send_welcome_emails: realm.sendWelcomeEmails,
    realm_message_content_allowed_in_email_notifications: realm.messageContentAllowedInEmailNotifications,
    realm_inline_image_preview: realm.inlineImagePreview,
    realm_inline_url_embed_preview: realm.inlineUrlEmbedPreview,
    realm_video_chat_provider: realm.videoChatProvider,
    realm_jitsi_server_url: realm.jitsiServerUrl,
    realm_giphy_rating: realm.giphyRating,
    realm_enable_read_receipts: realm.enableReadReceipts,
    realm_presence_disabled: realm.presenceDisabled,
    realm_is_zephyr_mirror_realm: false,
    realm_email_auth_enabled: true,
    realm_password_auth_enabled: true,
    realm_push_notifications_enabled: deps.config.PUSH_NOTIFICATIONS_ENABLED,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_upload_quota_mib: null,
    realm_org_type: realm.orgType,
    realm_plan_type: 1,
    realm_enable_guest_user_indicator: realm.enableGuestUserIndicator,
    realm_want_advertise_in_communities_directory: realm.wantAdvertiseInCommunitiesDirectory,
    realm_require_unique_names: realm.requireUniqueNames,
    realm_default_code_block_language: realm.defaultCodeBlockLanguage,
    realm_can_access_all_users_group: groups[realm.canAccessAllUsersGroup],
    realm_create_multiuse_invite_group: groups[realm.createMultiuseInviteGroup],
    realm_direct_message_initiator_group: groups["role:everyone"],
    realm_direct_message_permission_group: groups["role:everyone"],
    realm_authentication_methods: REALM_AUTHENTICATION_METHODS,
    realm_available_video_chat_providers: { disabled: { name: "None", id: 0 }, jitsi_meet: { name: "Jitsi Meet", id: 1 } },
    realm_default_external_accounts: Object.fromEntries(
      Object.entries(EXTERNAL_ACCOUNT_SUBTYPES).map(([site, a]) => [site, { name: `${a.name} username`, text: a.name, hint: a.hint, url_pattern: a.url_pattern }]),
    ),
    realm_new_stream_announcements_stream_id: realm.newStreamAnnouncementsStreamId ?? -1,
    realm_signup_announcements_stream_id: realm.signupAnnouncementsStreamId ?? -1,
    realm_zulip_update_announcements_stream_id: realm.zulipUpdateAnnouncementsStreamId ?? -1,
    max_stream_name_length: MAX_STREAM_NAME_LENGTH,
    max_stream_description_length: MAX_STREAM_DESCRIPTION_LENGTH,
    server_presence_ping_interval_seconds: 60,
    server_presence_offline_threshold_seconds: 200,
    server_typing_started_expiry_period_milliseconds: 45000,
    server_typing_stopped_wait_period_milliseconds: 12000,
    server_typing_started_wait_period_milliseconds: 30000,
    max_file_upload_size_mib: deps.config.MAX_FILE_UPLOAD_SIZE_MIB,
    max_avatar_file_size_mib: 5,
    max_icon_file_size_mib: 5,
    max_logo_file_size_mib: 5,
    server_generation: SERVER_GENERATION,
    password_min_length: PASSWORD_MIN_LENGTH,
    password_min_guesses: 10000,
    giphy_rating_options: GIPHY_RATING_OPTIONS,
    server_supported_permission_settings: SUPPORTED_PERMISSION_SETTINGS,
    server_inline_image_preview: true,
    server_inline_url_embed_preview: false,
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_needs_upgrade: false,
    server_web_public_streams_enabled: false,
    server_emoji_data_url: `${url}${EMOJI_DATA_PATH}`,
    server_jitsi_server_url: SERVER_JITSI_URL,
    // Deprecated (feature level 212): the Jitsi server calls use, the organization's or the server's.
    jitsi_server_url: realm.jitsiServerUrl ?? SERVER_JITSI_URL,
    development_environment: false,
    settings_send_digest_emails: false,
    zulip_plan_is_not_limited: true,
    upgrade_text_for_wide_organization_logo: "",
  };
}

async function realmUserState(ctx: StateContext): Promise<Record<string, unknown>> {
  const { deps, me, realm, clientGravatar } = ctx;
  // Each user's delivery email as this viewer may see it, and custom profile field values.
  const [list, accessible] = await Promise.all([
    userListsOf(deps).get(deps.pool, realm.id, { clientGravatar, profileData: true }),
    ctx.accessible(),
  ]);
  // A guest the organization limits: stand-ins for the others, or nothing for a client that can do without them.
  const limited: LimitedView | undefined = accessible
    ? {
        accessible,
        standIn: ctx.capabilities.user_list_incomplete === true ? null : (id) => JSON.stringify({ ...inaccessibleUserObject(id, realm.stringId), profile_data: {} }),
      }
    : undefined;
  const now = deps.clock.now();
  const can = (policy: number) => policyAllows(policy, me, realm, now);
  return {
    realm_users: new RawJson(userListJson(list, me, true, limited)),
    realm_non_active_users: new RawJson(userListJson(list, me, false, limited)),
    cross_realm_bots: new RawJson(list.botsJson),
    user_id: me.id,
    email: me.email,
    delivery_email: me.deliveryEmail,
    full_name: me.fullName,
    // The own avatar is always a full URL, as in Zulip (client_gravatar applies to others).
    avatar_source: me.avatarSource,
    avatar_url: avatarUrl(me, { clientGravatar: false }),
    avatar_url_medium: avatarUrl(me, { clientGravatar: false, medium: true }),
    is_admin: me.role <= ROLE.administrator,
    is_owner: me.role === ROLE.owner,
    is_moderator: me.role === ROLE.moderator,
    is_guest: me.role === ROLE.guest,
    is_billing_admin: me.isBillingAdmin,
    can_create_streams: can(realm.createPublicStreamPolicy) || can(realm.createPrivateStreamPolicy),
    can_create_public_streams: can(realm.createPublicStreamPolicy),
    can_create_private_streams: can(realm.createPrivateStreamPolicy),
    can_create_web_public_streams: realm.enableSpectatorAccess && webPublicAllowed(me, realm.createWebPublicStreamPolicy),
    can_subscribe_other_users: can(realm.inviteToStreamPolicy),
    can_invite_others_to_realm: realm.inviteToRealmPolicy !== POLICY.nobody && can(realm.inviteToRealmPolicy),
  };
}

/** Web-public channel creation uses its own enum (2 admins, 4 moderators, 6 nobody, 7 owners). */
function webPublicAllowed(me: UserRow, policy: number): boolean {
  if (policy === 7) return me.role === ROLE.owner;
  if (policy === 2) return me.role <= ROLE.administrator;
  if (policy === 4) return me.role <= ROLE.moderator;
  return false;
}
