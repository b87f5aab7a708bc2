import { z } from "zod";
import { UserAvatarSummary, UserObject, UserSummary } from "../models";
import { defineEvent } from "./index";

/**
 * A user's summary for the services' replicas; `avatar` beside it (absent in events of earlier
 * releases).
 */
const UserPayload = { user: UserSummary, avatar: UserAvatarSummary.optional() };

/**
 * A user was created (any role, bots included). `settings`: the personal settings the user starts
 * with that differ from Zulip's defaults (the organization's defaults for new users, which no
 * `accounts.user_settings.updated` announces), for the services' settings replicas; absent in
 * events of earlier releases.
 */
export const AccountsUserCreated = defineEvent(
  "accounts.user.created",
  z.object({ ...UserPayload, settings: z.record(z.string(), z.union([z.boolean(), z.number(), z.string()])).optional() }).passthrough(),
);
/** A user's fields changed; `user` is the whole new summary. */
/**
 * The realm_user/add notice for the users who may not see a new user's delivery email (theirs
 * says null); the others get theirs with `accounts.user.created`.
 */
export const AccountsUserAnnounced = defineEvent("accounts.user.announced", z.object({ user_id: z.number().int() }).passthrough());
export const AccountsUserUpdated = defineEvent("accounts.user.updated", z.object(UserPayload).passthrough());
/** A user was deactivated; they can no longer authenticate. */
export const AccountsUserDeactivated = defineEvent("accounts.user.deactivated", z.object(UserPayload).passthrough());
/** A user's API key was replaced; cached credentials must be dropped at once. */
export const AccountsApiKeyReset = defineEvent("accounts.api_key.reset", z.object({ user_id: z.number().int(), email: z.string() }).passthrough());
/** An organization was created or its settings changed. */
export const AccountsRealmCreated = defineEvent("accounts.realm.created", z.object({ realm_id: z.number().int(), name: z.string(), string_id: z.string() }).passthrough());
export const AccountsRealmDeactivated = defineEvent("accounts.realm.deactivated", z.object({ realm_id: z.number().int() }).passthrough());

/**
 * An invitation was accepted: the new user must be subscribed to `stream_ids` (plus the realm's
 * default channels when asked) and the referrer told by the notification bot when asked.
 * Accounts consumes it itself and calls messaging, so the work is retried until it succeeds.
 */
export const AccountsInviteAccepted = defineEvent(
  "accounts.invite.accepted",
  z
    .object({
      invite_id: z.number().int(),
      user_id: z.number().int(),
      referrer_id: z.number().int(),
      stream_ids: z.array(z.number().int()),
      include_realm_default_subscriptions: z.boolean(),
      notify_referrer_on_join: z.boolean(),
      /** Accepted through a reusable link: `invite_id` is the link's (its referrer is never told). */
      is_multiuse: z.boolean().optional(),
    })
    .passthrough(),
);

/**
 * A human joined without an invitation (POST /users, the admin CLI): as in Zulip's
 * do_create_user, they join the organization's default channels. Accounts consumes it itself
 * and calls messaging, so the work is retried until it succeeds.
 */
export const AccountsUserJoined = defineEvent("accounts.user.joined", z.object({ user_id: z.number().int() }).passthrough());

/** Client event `realm_user` / add: the whole user object. */
export const RealmUserAddEvent = z.strictObject({
  type: z.literal("realm_user"),
  op: z.literal("add"),
  person: UserObject,
});

/** Client event `realm_user` / update: `user_id` plus the group of fields that changed. */
export const RealmUserUpdateEvent = z.strictObject({
  type: z.literal("realm_user"),
  op: z.literal("update"),
  person: z
    .object({ user_id: z.number().int() })
    .and(
      z.union([
        z.strictObject({ user_id: z.number().int(), full_name: z.string() }),
        z.strictObject({ user_id: z.number().int(), role: z.number().int() }),
        z.strictObject({ user_id: z.number().int(), is_active: z.boolean() }),
        z.strictObject({ user_id: z.number().int(), email: z.string(), timezone: z.string() }),
        z.strictObject({ user_id: z.number().int(), bot_owner_id: z.number().int() }),
        z.strictObject({ user_id: z.number().int(), delivery_email: z.string().nullable() }),
        z.strictObject({ user_id: z.number().int(), new_email: z.string() }),
        z.strictObject({ user_id: z.number().int(), is_billing_admin: z.boolean() }),
        z.strictObject({
          user_id: z.number().int(),
          avatar_url: z.string(),
          avatar_source: z.string(),
          avatar_url_medium: z.string(),
          avatar_version: z.number().int(),
        }),
      ]),
    ),
});

/** Client event `user_status`: `user_id` plus only the fields that changed. */
export const UserStatusEvent = z.strictObject({
  type: z.literal("user_status"),
  user_id: z.number().int(),
  away: z.boolean().optional(),
  status_text: z.string().optional(),
  emoji_name: z.string().optional(),
  emoji_code: z.string().optional(),
  reaction_type: z.string().optional(),
});

export const Linkifier = z.strictObject({ id: z.number().int(), pattern: z.string(), url_template: z.string() });
export type Linkifier = z.infer<typeof Linkifier>;

/** Client event `realm_linkifiers`: the whole ordered list after any change. */
export const RealmLinkifiersEvent = z.strictObject({
  type: z.literal("realm_linkifiers"),
  realm_linkifiers: z.array(Linkifier),
});

/** A user's status changed; `client` carries the user_status event for the organization. */
export const AccountsUserStatusUpdated = defineEvent("accounts.user_status.updated", z.object({ user_id: z.number().int() }).passthrough());

/** Client event `user_settings` / update (feature level 89+). */
export const UserSettingsUpdateEvent = z.strictObject({
  type: z.literal("user_settings"),
  op: z.literal("update"),
  property: z.string(),
  value: z.union([z.boolean(), z.number(), z.string()]),
  language_name: z.string().optional(),
});

/** A user's own setting changed; `client` carries user_settings (or the legacy form) for the user's queues. */
export const AccountsUserSettingsUpdated = defineEvent(
  "accounts.user_settings.updated",
  z.object({ user_id: z.number().int(), property: z.string(), value: z.unknown() }).passthrough(),
);

/** The realm's linkifiers changed; `linkifiers` is the whole ordered list (messaging renders with it). */
export const AccountsLinkifiersChanged = defineEvent(
  "accounts.linkifiers.changed",
  z.object({ linkifiers: z.array(Linkifier) }).passthrough(),
);

/** Pending invitations changed; `client` carries `invites_changed` for administrators and the referrer. */
export const AccountsInvitesChanged = defineEvent("accounts.invites.changed", z.object({}).passthrough());
