import { z } from "zod";

/** Zulip's user object (GET /users, realm_users in register). */
export const UserObject = z.strictObject({
  user_id: z.number().int(),
  email: z.string(),
  delivery_email: z.string().nullable(),
  full_name: z.string(),
  date_joined: z.string(),
  is_active: z.boolean(),
  is_owner: z.boolean(),
  is_admin: z.boolean(),
  is_guest: z.boolean(),
  is_billing_admin: z.boolean(),
  is_bot: z.boolean(),
  bot_type: z.number().int().nullable(),
  bot_owner_id: z.number().int().nullable().optional(),
  role: z.number().int(),
  timezone: z.string(),
  avatar_url: z.string().nullable(),
  avatar_version: z.number().int(),
  profile_data: z.record(z.string(), z.unknown()).optional(),
});
export type UserObject = z.infer<typeof UserObject>;

/**
 * What other services keep about a user (replicated from accounts' domain events, or read from
 * accounts' internal user lookup on a miss).
 */
export const UserSummary = z.strictObject({
  user_id: z.number().int(),
  realm_id: z.number().int(),
  email: z.string(),
  delivery_email: z.string(),
  full_name: z.string(),
  role: z.number().int(),
  is_active: z.boolean(),
  is_bot: z.boolean(),
  bot_type: z.number().int().nullable(),
  bot_owner_id: z.number().int().nullable(),
  date_joined: z.string(),
  timezone: z.string(),
});
export type UserSummary = z.infer<typeof UserSummary>;

/**
 * What other services need to build a user's avatar URL as Zulip does (see avatarUrl): beside
 * `user` in accounts' user events and in its internal user lookup, not inside it, since consumers
 * of earlier releases read `user` strictly. Events of earlier releases come without it:
 * `email_public` null says the rest is not known either (replicas read the user again).
 */
export const UserAvatarSummary = z.strictObject({
  avatar_source: z.enum(["G", "U"]).default("G"),
  avatar_version: z.number().int().default(1),
  /** The uploaded image's name (its URL is public); null for a Gravatar. */
  avatar_token: z.string().nullable().default(null),
  /** Whether everyone may see the delivery email (the API email is then the real one); null: unknown. */
  email_public: z.boolean().nullable().default(null),
});
export type UserAvatarSummary = z.infer<typeof UserAvatarSummary>;
