import { z } from "zod";
import { Linkifier } from "../events/accounts";
import { UserAvatarSummary, UserSummary } from "../models";
import { p } from "../params";
import { RealmEmojiDict } from "./realm-emoji";
import { empty, route, success, type ServiceName } from "../route";

/**
 * Service-to-service routes. Never exposed by the gateway (auth "internal"); called with the
 * internal token through the platform's InternalClient, parameters Zulip-encoded.
 */

/**
 * The gateway's credential check. Errors carry the exact Zulip `msg` for the 401. Without
 * `email` the key alone names its user (an integration URL's `api_key`).
 */
export const InternalAuthenticate = route({
  method: "POST",
  path: "/internal/authenticate",
  service: "accounts",
  auth: "internal",
  params: { email: p.str(), api_key: p.str().required() },
  response: success({
    user_id: z.number().int(),
    realm_id: z.number().int(),
    /** The organization's subdomain: the gateway refuses the account on another organization's host. */
    realm_string_id: z.string(),
    role: z.number().int(),
    is_bot: z.boolean(),
    /** 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded; null for humans. */
    bot_type: z.number().int().nullable(),
    email: z.string(),
  }),
});

/**
 * User lookup for services that keep a replica, within one realm, any status: by ids, emails
 * and/or full names (unknown ones are simply absent); with none of them, every user of the realm as GET /users
 * lists them (bots included, the realm's system bots excepted), to fill a replica at once. Each
 * with what its avatar URL is built from (`avatar`).
 */
export const InternalGetUsers = route({
  method: "GET",
  path: "/internal/users",
  service: "accounts",
  auth: "internal",
  params: {
    realm_id: p.int().required(),
    user_ids: p.json(z.array(z.number().int())),
    emails: p.json(z.array(z.string())),
    /** Full names, matched without case (mentions of users a replica does not know yet). */
    full_names: p.json(z.array(z.string())),
  },
  response: success({ users: z.array(UserSummary.extend({ avatar: UserAvatarSummary })) }),
});

/** Admin CLI: create an organization with its first owner. */
export const InternalCreateRealm = route({
  method: "POST",
  path: "/internal/realms",
  service: "accounts",
  auth: "internal",
  params: {
    name: p.str().required(),
    string_id: p.str(),
    owner_email: p.str().required(),
    owner_full_name: p.str().required(),
    owner_password: p.str(),
  },
  response: success({
    realm_id: z.number().int(),
    string_id: z.string(),
    /** Where its members reach it (its own host with ORGANIZATION_SUBDOMAINS). */
    realm_url: z.string(),
    owner: z.object({ user_id: z.number().int(), email: z.string(), api_key: z.string() }),
  }),
});

/** Admin CLI: create a user of any role, or a bot owned by `bot_owner_id`. */
export const InternalCreateUser = route({
  method: "POST",
  path: "/internal/users",
  service: "accounts",
  auth: "internal",
  params: {
    realm_id: p.int().required(),
    email: p.str().required(),
    full_name: p.str().required(),
    role: p.int().default(400),
    password: p.str(),
    bot_type: p.int(),
    bot_owner_id: p.int(),
  },
  response: success({ user_id: z.number().int(), email: z.string(), api_key: z.string() }),
});

/** Admin CLI: replace a user's API key; the old one stops working at once. */
export const InternalResetApiKey = route({
  method: "POST",
  path: "/internal/users/api_key/reset",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required(), email: p.str().required() },
  response: success({ user_id: z.number().int(), email: z.string(), api_key: z.string() }),
});

/**
 * Admin CLI: grant or remove the billing role. Zulip changes it outside its API (billing pages,
 * management commands), so this is an operator's action; clients see `realm_user` update with
 * `is_billing_admin` (spec section 6). Another organization's user is "No such user".
 */
export const InternalSetBillingAdmin = route({
  method: "POST",
  path: "/internal/users/billing_admin",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required(), user_id: p.int().required(), is_billing_admin: p.bool().required() },
  response: empty,
});

/**
 * Operator CLI: allow or disallow a user to create accounts through POST /users (Zulip's
 * can_create_users, which only the server's operator sets). Another organization's user is
 * "No such user".
 */
export const InternalSetCanCreateUsers = route({
  method: "POST",
  path: "/internal/users/can_create_users",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required(), user_id: p.int().required(), can_create_users: p.bool().required() },
  response: empty,
});

/** Parameters POST /register passes to every service that contributes initial state. */
export const registerStateParams = {
  /** Event types whose state is wanted; null means all. */
  fetch_event_types: p.json(z.array(z.string()).nullable()).nullable(),
  client_capabilities: p.json(z.record(z.string(), z.unknown())).default({}),
  include_subscribers: p.bool().default(false),
  client_gravatar: p.bool().default(true),
  apply_markdown: p.bool().default(false),
  narrow: p.json(z.array(z.unknown())).default([]),
  /** Presence keyed by user id in the modern format (else by email, legacy). */
  slim_presence: p.bool().default(false),
  /** How far back presence goes; unset means Zulip's 14 days. */
  presence_history_limit_days: p.int(),
};

/**
 * The slice of POST /register's initial state that one service owns (accounts: realm,
 * realm_user, user groups, status, linkifiers; messaging: subscription, message, drafts, ...;
 * scheduler: scheduled_messages). The caller's identity rides on the internal headers. The
 * events service calls every service in parallel and merges the objects.
 */
export function registerStateRoute(service: Exclude<ServiceName, "gateway" | "events">) {
  return route({
    method: "POST",
    path: `/internal/register_state/${service}`,
    service,
    auth: "user",
    params: registerStateParams,
    response: z.record(z.string(), z.unknown()),
  });
}
export const AccountsRegisterState = registerStateRoute("accounts");
export const MessagingRegisterState = registerStateRoute("messaging");
export const SchedulerRegisterState = registerStateRoute("scheduler");

/**
 * Realm settings other services enforce (messaging: wildcard mentions, posting and channel
 * creation policies, retention; scheduler: permission re-checks). Values use Zulip's enums.
 */
export const RealmSettings = z.object({
  /** 1 everyone, 2 members, 3 full members, 5 admins, 6 nobody, 7 moderators (Zulip's enum). */
  wildcard_mention_policy: z.number().int(),
  /** 1 members, 2 admins, 3 full members, 4 moderators, 6 nobody. */
  invite_to_realm_policy: z.number().int(),
  /** 1 members, 2 admins, 3 full members, 4 moderators. */
  invite_to_stream_policy: z.number().int(),
  create_public_stream_policy: z.number().int(),
  create_private_stream_policy: z.number().int(),
  create_web_public_stream_policy: z.number().int(),
  /** Days before a member becomes a full member. */
  waiting_period_threshold: z.number().int(),
  /** null = keep forever. */
  message_retention_days: z.number().int().nullable(),
  invite_required: z.boolean(),
  mandatory_topics: z.boolean(),
  enable_spectator_access: z.boolean(),
  allow_message_editing: z.boolean(),
  message_content_edit_limit_seconds: z.number().int().nullable(),
  message_content_delete_limit_seconds: z.number().int().nullable(),
  /** 1 members, 2 admins, 3 full members, 4 moderators, 5 everyone. */
  edit_topic_policy: z.number().int(),
  move_messages_between_streams_policy: z.number().int(),
  /** 1 members, 2 admins, 3 full members, 4 moderators, 5 everyone. */
  delete_own_message_policy: z.number().int(),
  /** 1 any user may start a DM, 2 disabled. */
  private_message_policy: z.number().int(),
  /** Max invitations per day for this organization. */
  max_invites_per_day: z.number().int(),
  /** Whether users may see who read a message (GET /messages/{id}/read_receipts). */
  enable_read_receipts: z.boolean(),
  /**
   * Seconds after sending within which users below moderator may move a message to another
   * topic, or to another channel; null means no limit.
   */
  move_messages_within_stream_limit_seconds: z.number().int().nullable(),
  move_messages_between_streams_limit_seconds: z.number().int().nullable(),
  /** Whether users may see a message's edit history. */
  allow_edit_history: z.boolean(),
  /**
   * Who may add custom emoji: 1 members, 2 admins, 3 full members, 4 moderators (Zulip's
   * add_custom_emoji_policy at feature level 267). Absent from accounts that do not keep the
   * setting yet: 1, as register reports.
   */
  add_custom_emoji_policy: z.number().int().optional(),
  /**
   * The channel where the notification bot announces new channels (Zulip's
   * new_stream_announcements_stream); null or absent: none.
   */
  new_stream_announcements_stream_id: z.number().int().nullable().optional(),
  /**
   * The system group (by name) whose members access every user: role:everyone, or role:members
   * (guests access only the users they share a channel or a conversation with). Absent from
   * accounts that do not keep the setting yet: role:everyone.
   */
  can_access_all_users_group: z.string().optional(),
  /**
   * The language of a fenced code block that names none ("" none); it decides how messaging
   * renders such a block. Absent from accounts that do not send it yet: "".
   */
  default_code_block_language: z.string().optional(),
});
export type RealmSettings = z.infer<typeof RealmSettings>;

/** The 8 system groups every realm has, by name. */
export const SYSTEM_GROUP_NAMES = [
  "role:owners",
  "role:administrators",
  "role:moderators",
  "role:fullmembers",
  "role:members",
  "role:everyone",
  "role:internet",
  "role:nobody",
] as const;
export type SystemGroupName = (typeof SYSTEM_GROUP_NAMES)[number];

export const InternalRealm = z.object({
  id: z.number().int(),
  name: z.string(),
  string_id: z.string(),
  deactivated: z.boolean(),
  /** Unix seconds. */
  date_created: z.number().int(),
  settings: RealmSettings,
  system_groups: z.record(z.string(), z.number().int()),
  /** The realm's notification bot (bot_type 1): sender of system direct messages. */
  notification_bot_id: z.number().int(),
});
export type InternalRealm = z.infer<typeof InternalRealm>;

/** An organization's settings and system group ids (deactivated realms included). */
export const InternalGetRealm = route({
  method: "GET",
  path: "/internal/realms/{realm_id}",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().path() },
  response: success({ realm: InternalRealm }),
});

/** Whether a user belongs to a group, directly or through subgroups at any depth. */
export const InternalUserGroupIsMember = route({
  method: "GET",
  path: "/internal/user_groups/is_member",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required(), group_id: p.int().required(), user_id: p.int().required() },
  response: success({ is_member: z.boolean() }),
});

/** Every active member of a group, recursively (group mentions, group-based permissions). */
export const InternalUserGroupMembers = route({
  method: "GET",
  path: "/internal/user_groups/members",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required(), group_id: p.int().required() },
  response: success({ user_ids: z.array(z.number().int()) }),
});

/**
 * Accepts a pending, unexpired invitation (the admin CLI or a sign-up front end): creates the
 * account with the invitation's role; channels and the referrer's notice follow asynchronously.
 */
export const InternalAcceptInvite = route({
  method: "POST",
  path: "/internal/invites/accept",
  service: "accounts",
  auth: "internal",
  params: {
    realm_id: p.int().required(),
    email: p.str().required(),
    full_name: p.str().required(),
    password: p.str(),
  },
  response: success({ user_id: z.number().int(), email: z.string(), api_key: z.string(), role: z.number().int() }),
});

/** Deletes invitations that expired (the scheduler's periodic clean-up may call it). */
export const InternalCleanupInvites = route({
  method: "POST",
  path: "/internal/invites/cleanup",
  service: "accounts",
  auth: "internal",
  params: {},
  response: success({ deleted: z.number().int() }),
});

/**
 * Whether a user may mention a group (`@*group*`): membership, recursive, of the group's
 * `can_mention_group` setting (a named group or an anonymous set of users and subgroups).
 */
export const InternalUserGroupCanMention = route({
  method: "GET",
  path: "/internal/user_groups/can_mention",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required(), group_id: p.int().required(), user_id: p.int().required() },
  response: success({ can_mention: z.boolean() }),
});

/** A realm's named user groups, system groups included (group mentions, group setting checks). */
export const InternalListUserGroups = route({
  method: "GET",
  path: "/internal/user_groups",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required() },
  response: success({
    user_groups: z.array(z.strictObject({ id: z.number().int(), name: z.string(), is_system_group: z.boolean() })),
  }),
});

/** A realm's linkifiers in their order (messaging renders with them). */
export const InternalListLinkifiers = route({
  method: "GET",
  path: "/internal/linkifiers",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required() },
  response: success({ linkifiers: z.array(Linkifier) }),
});

/** A personal setting's value as accounts stores it. */
export const UserSettingValue = z.union([z.boolean(), z.number(), z.string()]);

/**
 * Current personal settings of some users of one realm (every setting, effective values: the
 * user's own or the default they started with); unknown users are absent. Services that honour a
 * setting keep a replica fed by `accounts.user_settings.updated` and read through here on a miss.
 */
export const InternalGetUserSettings = route({
  method: "GET",
  path: "/internal/user_settings",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required(), user_ids: p.json(z.array(z.number().int())).required() },
  response: success({
    users: z.array(z.strictObject({ user_id: z.number().int(), settings: z.record(z.string(), UserSettingValue) })),
  }),
});

/**
 * An organization's whole custom emoji dictionary, as GET /realm/emoji gives it, for accounts'
 * replica (status emoji) when it misses an emoji: uploaded before the replica existed, or whose
 * messaging.realm_emoji.updated has not arrived yet.
 */
export const InternalGetRealmEmoji = route({
  method: "GET",
  path: "/internal/realm/emoji",
  service: "messaging",
  auth: "internal",
  params: { realm_id: p.int().required() },
  response: success({ emoji: RealmEmojiDict }),
});

/**
 * An outgoing webhook bot's service (Zulip's Service): where messaging POSTs the messages that
 * trigger the bot, how (`interface`: 1 Zulip's generic format, 2 Slack's), and the token it
 * sends along. "No such bot" (400) for a bot of another organization or without a service.
 */
export const InternalGetBotService = route({
  method: "GET",
  path: "/internal/bots/{bot_id}/service",
  service: "accounts",
  auth: "internal",
  params: { bot_id: p.int().path(), realm_id: p.int().required() },
  response: success({ base_url: z.string(), interface: z.number().int(), token: z.string() }),
});

/**
 * What messaging's missed-message emails need of accounts when they are due: each user's last
 * activity (presence `last_active_time`, Unix seconds; null: never active), by which a user
 * counts as away; whether the user's email address has active accounts in other active
 * organizations of this server (`has_accounts_in_other_realms`: the organization's name then goes
 * in the subject under the "automatic" realm_name_in_email_notifications_policy); and whether
 * the organization allows message content in notification emails.
 */
export const InternalGetEmailNotificationState = route({
  method: "GET",
  path: "/internal/email_notification_state",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required(), user_ids: p.json(z.array(z.number().int()).max(100)).required() },
  response: success({
    message_content_allowed_in_email_notifications: z.boolean(),
    users: z.array(z.strictObject({ user_id: z.number().int(), last_active_time: z.number().int().nullable(), has_accounts_in_other_realms: z.boolean() })),
  }),
});

/**
 * Who messaging's weekly digest emails go to today, a page at a time: in the organizations with
 * digests on whose `digest_weekday` (0 = Monday) is `weekday`, the active human users with
 * `enable_digest_emails` on and no activity (presence `last_active_time`, Unix seconds; null:
 * never) since `inactive_since`, by id, the first `limit` after `after_user_id`; fewer than
 * `limit` ends the walk. `new_users`: the active humans of the user's organization (not the user)
 * who joined after the user's last activity and after `joined_since` (the digest tells how many
 * people joined while the reader was away).
 */
export const InternalGetDigestRecipients = route({
  method: "GET",
  path: "/internal/digest_recipients",
  service: "accounts",
  auth: "internal",
  params: {
    weekday: p.int(z.number().int().min(0).max(6)).required(),
    inactive_since: p.int().required(),
    joined_since: p.int().required(),
    after_user_id: p.int(z.number().int().min(0)).default(0),
    limit: p.int(z.number().int().min(1).max(1000)).required(),
  },
  response: success({
    users: z.array(
      z.strictObject({
        realm_id: z.number().int(),
        user_id: z.number().int(),
        delivery_email: z.string(),
        full_name: z.string(),
        role: z.number().int(),
        last_active_time: z.number().int().nullable(),
        new_users: z.number().int(),
      }),
    ),
  }),
});
