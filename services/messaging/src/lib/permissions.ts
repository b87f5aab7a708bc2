import { ApiError, ROLES } from "@chat/platform";

/** Who is acting: enough to apply Zulip's role-based rules. */
export interface Actor {
  role: number;
  /** ISO date the account joined; decides full membership. */
  dateJoined: string;
}

export const isAdminRole = (role: number) => role <= ROLES.administrator;
export const isModeratorRole = (role: number) => role <= ROLES.moderator;
export const isGuestRole = (role: number) => role === ROLES.guest;

/** Zulip's require_realm_admin (changing or deleting a channel, default channels). */
export function checkAdministrator(role: number): void {
  if (!isAdminRole(role)) throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
}

/** Zulip's "full member": not a guest, and either moderator+ or past the waiting period. */
export function isFullMember(actor: Actor, waitingPeriodDays: number, now: Date): boolean {
  if (isGuestRole(actor.role)) return false;
  if (isModeratorRole(actor.role)) return true;
  const joined = Date.parse(actor.dateJoined);
  if (Number.isNaN(joined)) return true;
  return (now.getTime() - joined) / 86_400_000 >= waitingPeriodDays;
}

/**
 * Zulip's common policy enum (channel creation, adding subscribers): 1 members, 2 admins,
 * 3 full members, 4 moderators, 6 nobody, 7 owners. Guests never pass.
 */
export function passesCommonPolicy(policy: number, actor: Actor, waitingPeriodDays: number, now: Date): boolean {
  if (isGuestRole(actor.role)) return false;
  switch (policy) {
    case 1:
      return true;
    case 2:
      return isAdminRole(actor.role);
    case 3:
      return isFullMember(actor, waitingPeriodDays, now);
    case 4:
      return isModeratorRole(actor.role);
    case 7:
      return actor.role <= ROLES.owner;
    default:
      return false;
  }
}

/** Wildcard mention policy: 1 everyone, 2 members, 3 full members, 4/5 admins, 6 nobody, 7 moderators. */
export function passesWildcardPolicy(policy: number, actor: Actor, waitingPeriodDays: number, now: Date): boolean {
  switch (policy) {
    case 1:
      return true;
    case 2:
      return !isGuestRole(actor.role);
    case 3:
      return isFullMember(actor, waitingPeriodDays, now);
    case 4:
    case 5:
      return isAdminRole(actor.role);
    case 7:
      return isModeratorRole(actor.role);
    default:
      return false;
  }
}

/** Channel and topic wildcard mentions are always allowed up to this many people. */
export const WILDCARD_MENTION_THRESHOLD = 15;

/** Why `actor` may not post to a channel with this `stream_post_policy`, or null if they may. */
export function postPolicyRefusal(policy: number, actor: Actor, waitingPeriodDays: number, now: Date): string | null {
  if (isAdminRole(actor.role)) return null;
  if (policy === 2) return "Only organization administrators can send to this channel.";
  if (policy === 4 && !isModeratorRole(actor.role)) return "Only organization administrators and moderators can send to this channel.";
  if (policy !== 1 && isGuestRole(actor.role)) return "Guests cannot send to this channel.";
  if (policy === 3 && !isFullMember(actor, waitingPeriodDays, now)) return "New members cannot send to this channel.";
  return null;
}
