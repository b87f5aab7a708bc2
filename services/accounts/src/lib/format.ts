import { INACCESSIBLE_USER_AVATAR_PATH, INACCESSIBLE_USER_NAME, inaccessibleUserEmail, type ClientGravatarOption, type UserAvatarSummary, type UserObject, type UserSummary } from "@chat/contracts";
import type { UserRow } from "../store/users";
import { avatarUrl, isEmailPublic } from "./avatar";

export const ROLE = { owner: 100, administrator: 200, moderator: 300, member: 400, guest: 600 } as const;
export const VALID_ROLES = [100, 200, 300, 400, 600];

/**
 * Zulip's user object. With client_gravatar the client computes the Gravatar URL of a user whose
 * email everyone may see (null here); the others' is the URL.
 */
export function userObject(u: UserRow, opts: ClientGravatarOption): UserObject {
  const out: UserObject = {
    user_id: u.id,
    email: u.email,
    delivery_email: u.deliveryEmail,
    full_name: u.fullName,
    date_joined: u.dateJoined.toISOString(),
    is_active: u.isActive,
    is_owner: u.role === ROLE.owner,
    is_admin: u.role <= ROLE.administrator,
    is_guest: u.role === ROLE.guest,
    is_billing_admin: u.isBillingAdmin,
    is_bot: u.isBot,
    bot_type: u.isBot ? u.botType : null,
    role: u.role,
    timezone: u.timezone,
    avatar_url: avatarUrl(u, opts),
    avatar_version: u.avatarVersion,
  };
  if (u.isBot) out.bot_owner_id = u.botOwnerId;
  return out;
}

/**
 * Zulip's "Unknown user" stand-in for a user a guest may not access: the usual user object, every
 * value a placeholder but the id (a member who joined at the epoch, the dummy address).
 */
export function inaccessibleUserObject(userId: number, realmStringId: string): UserObject {
  return {
    user_id: userId,
    email: inaccessibleUserEmail(userId, realmStringId),
    delivery_email: null,
    full_name: INACCESSIBLE_USER_NAME,
    date_joined: new Date(0).toISOString(),
    is_active: true,
    is_owner: false,
    is_admin: false,
    is_guest: false,
    is_billing_admin: false,
    is_bot: false,
    bot_type: null,
    role: ROLE.member,
    timezone: "",
    avatar_url: INACCESSIBLE_USER_AVATAR_PATH,
    avatar_version: 1,
  };
}

/** What other services replicate about a user. */
export function userSummary(u: UserRow): UserSummary {
  return {
    user_id: u.id,
    realm_id: u.realmId,
    email: u.email,
    delivery_email: u.deliveryEmail,
    full_name: u.fullName,
    role: u.role,
    is_active: u.isActive,
    is_bot: u.isBot,
    bot_type: u.botType,
    bot_owner_id: u.botOwnerId,
    date_joined: u.dateJoined.toISOString(),
    timezone: u.timezone,
  };
}

/** What other services need to build the user's avatar URL (beside the summary). */
export function avatarSummary(u: UserRow, emailVisibility: number): UserAvatarSummary {
  return {
    avatar_source: u.avatarSource,
    avatar_version: u.avatarVersion,
    avatar_token: u.avatarToken,
    email_public: isEmailPublic(emailVisibility),
  };
}
