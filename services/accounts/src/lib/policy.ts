import type { RealmRow } from "../store/realms";
import type { UserRow } from "../store/users";
import { ROLE } from "./format";

/** Zulip's policy enums as used by realm settings. */
export const POLICY = { members: 1, admins: 2, fullMembers: 3, moderators: 4, everyone: 5, nobody: 6 } as const;

/** A member past the realm's waiting period (admins and moderators always count). */
export function isFullMember(user: Pick<UserRow, "role" | "dateJoined">, realm: Pick<RealmRow, "waitingPeriodThreshold">, now: Date): boolean {
  if (user.role <= ROLE.moderator) return true;
  if (user.role === ROLE.guest) return false;
  const days = (now.getTime() - user.dateJoined.getTime()) / 86_400_000;
  return days >= realm.waitingPeriodThreshold;
}

/** Whether a user satisfies one of Zulip's common policies (members/admins/full members/moderators/everyone/nobody). */
export function policyAllows(policy: number, user: Pick<UserRow, "role" | "dateJoined">, realm: Pick<RealmRow, "waitingPeriodThreshold">, now: Date): boolean {
  switch (policy) {
    case POLICY.everyone:
      return true;
    case POLICY.members:
      return user.role !== ROLE.guest;
    case POLICY.admins:
      return user.role <= ROLE.administrator;
    case POLICY.fullMembers:
      return isFullMember(user, realm, now);
    case POLICY.moderators:
      return user.role <= ROLE.moderator;
    default:
      return false;
  }
}
