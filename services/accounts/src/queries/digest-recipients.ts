import type { Queryable } from "@chat/platform";
import { unixSeconds } from "../lib/presence";
import { SETTING_DEFAULTS } from "../lib/user-settings";
import { selectDigestRecipients, selectRecentJoins, type DigestRecipientRow } from "../store/digest-recipients";

export interface DigestRecipient extends DigestRecipientRow {
  /** Others of the organization who joined after the user's last activity and `joinedSince`. */
  newUsers: number;
}

/** How many of the ascending `times` are later than `t`. */
function countLater(times: number[], t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] > t) hi = mid;
    else lo = mid + 1;
  }
  return times.length - lo;
}

/**
 * A page of messaging's digest recipients (InternalGetDigestRecipients), each with the number of
 * people who joined while they were away: counted here, so that an answer stays the size of its
 * page however many people joined. Times are compared in whole seconds, as the route's are given.
 */
export async function getDigestRecipientsPage(
  db: Queryable,
  q: { weekday: number; inactiveSince: Date; joinedSince: Date; afterUserId: number; limit: number },
): Promise<DigestRecipient[]> {
  const users = await selectDigestRecipients(db, { ...q, digestDefault: SETTING_DEFAULTS.enable_digest_emails === true });
  const joins = await selectRecentJoins(db, [...new Set(users.map((u) => u.realmId))], q.joinedSince);
  const joinTimes = new Map<number, number[]>();
  const joinedAt = new Map<number, number>();
  for (const j of joins) {
    const times = joinTimes.get(j.realmId) ?? [];
    times.push(unixSeconds(j.dateJoined));
    joinTimes.set(j.realmId, times);
    joinedAt.set(j.userId, unixSeconds(j.dateJoined));
  }
  return users.map((u) => {
    const since = Math.max(u.lastActive ? unixSeconds(u.lastActive) : -Infinity, unixSeconds(q.joinedSince));
    const self = (joinedAt.get(u.userId) ?? -Infinity) > since ? 1 : 0;
    return { ...u, newUsers: countLater(joinTimes.get(u.realmId) ?? [], since) - self };
  });
}
