import type { Queryable } from "@chat/platform";
import { unixSeconds } from "../lib/presence";
import { SETTING_DEFAULTS } from "../lib/user-settings";
import { selectDigestRecipients, selectRecentJoins, selectUserListVersions, type DigestRecipientRow } from "../store/digest-recipients";

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

/** An organization's joins since one `joinedSince`, in whole seconds, read at one user list version. */
interface RecentJoins {
  version: string;
  /** Ascending. */
  times: number[];
  joinedAt: Map<number, number>;
}

/** Join times held over all organizations (about 100 bytes each). */
const RECENT_JOINS_HELD = 100_000;

/**
 * The recent joins of each organization, kept between the pages of one digest run: the job asks
 * for the same `joinedSince` page after page, and a large organization's recipients span many
 * pages. An entry is reused while the organization's `user_list_versions` version (moved by a
 * trigger on every change to its users) is still the one it was read at, so an answer is the
 * same as one read afresh. The version is read before the rows (see UserListCache). Least
 * recently used entries go first past RECENT_JOINS_HELD.
 */
export class RecentJoinsCache {
  private readonly entries = new Map<string, RecentJoins>();
  private held = 0;

  async get(db: Queryable, realmIds: number[], joinedSince: Date): Promise<Map<number, RecentJoins>> {
    const since = unixSeconds(joinedSince);
    const versions = await selectUserListVersions(db, realmIds);
    const found = new Map<number, RecentJoins>();
    const stale: number[] = [];
    for (const realmId of realmIds) {
      const key = `${realmId}:${since}`;
      const held = this.entries.get(key);
      if (held && held.version === versions.get(realmId)) {
        this.entries.delete(key);
        this.entries.set(key, held);
        found.set(realmId, held);
      } else stale.push(realmId);
    }
    const read = new Map(stale.map((realmId) => [realmId, { version: versions.get(realmId)!, times: [] as number[], joinedAt: new Map<number, number>() }]));
    for (const j of await selectRecentJoins(db, stale, joinedSince)) {
      const entry = read.get(j.realmId)!;
      entry.times.push(unixSeconds(j.dateJoined));
      entry.joinedAt.set(j.userId, unixSeconds(j.dateJoined));
    }
    for (const [realmId, entry] of read) {
      found.set(realmId, entry);
      this.keep(`${realmId}:${since}`, entry);
    }
    return found;
  }

  private keep(key: string, entry: RecentJoins): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.held -= old.times.length;
    }
    // An empty entry still costs a little: count it as one.
    const size = Math.max(1, entry.times.length);
    if (size > RECENT_JOINS_HELD) return;
    this.entries.set(key, entry);
    this.held += size;
    for (const [k, e] of this.entries) {
      if (this.held <= RECENT_JOINS_HELD) break;
      this.entries.delete(k);
      this.held -= Math.max(1, e.times.length);
    }
  }
}

/** This process's recent joins cache (made on first use). */
export function recentJoinsOf(deps: { recentJoins?: RecentJoinsCache }): RecentJoinsCache {
  deps.recentJoins ??= new RecentJoinsCache();
  return deps.recentJoins;
}

/**
 * A page of messaging's digest recipients (InternalGetDigestRecipients), each with the number of
 * people who joined while they were away: counted here, so that an answer stays the size of its
 * page however many people joined. Times are compared in whole seconds, as the route's are given.
 */
export async function getDigestRecipientsPage(
  db: Queryable,
  joins: RecentJoinsCache,
  q: { weekday: number; inactiveSince: Date; joinedSince: Date; afterUserId: number; limit: number },
): Promise<DigestRecipient[]> {
  const users = await selectDigestRecipients(db, { ...q, digestDefault: SETTING_DEFAULTS.enable_digest_emails === true });
  const recent = await joins.get(db, [...new Set(users.map((u) => u.realmId))], q.joinedSince);
  return users.map((u) => {
    const since = Math.max(u.lastActive ? unixSeconds(u.lastActive) : -Infinity, unixSeconds(q.joinedSince));
    const { times, joinedAt } = recent.get(u.realmId)!;
    const self = (joinedAt.get(u.userId) ?? -Infinity) > since ? 1 : 0;
    return { ...u, newUsers: countLater(times, since) - self };
  });
}
