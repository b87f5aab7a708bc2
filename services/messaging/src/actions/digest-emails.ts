import { organizationUrl, queueMail, withTx } from "@chat/platform";
import type { AppDeps } from "../deps";
import {
  digestMail,
  digestWeekday,
  digestWindowStart,
  inactiveSince,
  lastWeekStart,
  pickHotTopics,
  TEASER_MESSAGES,
  DIGEST_WINDOW_DAYS,
  type DigestConversation,
} from "../lib/digest-email";
import { fetchDigestRecipients, type DigestRealm } from "../lib/digest-recipients";
import { getUsersByIds } from "../queries/users";
import {
  claimDigest,
  markDigestMailed,
  selectDigestTeasers,
  selectDigestTopics,
  selectLastMessageIdAtOrBefore,
  selectNewDigestChannels,
  selectRecentDigests,
} from "../store/digest-emails";

/**
 * Zulip's weekly digest emails, the job's side (jobs/digest-emails.ts): on an organization's
 * digest weekday (UTC), each of its users who is away (accounts says who) and had no digest this
 * past week gets one mail of the hot conversations of their channels, the new channels and the
 * number of people who joined since they were last active. The claim and the mail commit
 * together, so that a user gets one digest a week whichever process makes it.
 */

const GUEST_ROLE = 600;

/** Makes today's due digests; returns how many were mailed. */
export async function doSendDigestEmails(deps: AppDeps): Promise<number> {
  const now = deps.clock.now();
  const windowStart = new Date(now.getTime() - DIGEST_WINDOW_DAYS * 24 * 3600 * 1000);
  const realms = await fetchDigestRecipients(deps.config, {
    weekday: digestWeekday(now),
    inactiveSince: inactiveSince(now),
    joinedSince: windowStart,
  });
  if (realms.length === 0) return 0;
  // Every user's window lies within the last DIGEST_WINDOW_DAYS: no older message is read.
  const afterId = await selectLastMessageIdAtOrBefore(deps.pool, windowStart);
  let mailed = 0;
  for (const realm of realms) {
    const done = await selectRecentDigests(deps.pool, realm.realmId, realm.users.map((u) => u.userId), lastWeekStart(now));
    for (const user of realm.users) {
      if (done.has(user.userId)) continue;
      try {
        if (await doSendDigestEmail(deps, realm, user, now, afterId)) mailed++;
      } catch (err) {
        // Left unclaimed: the next pass of the day tries again.
        deps.log.warn({ err: (err as Error).message, userId: user.userId }, "digest email failed; will retry");
      }
    }
  }
  return mailed;
}

/** One user's digest: claimed, then mailed if there is anything to tell. True when mailed. */
async function doSendDigestEmail(deps: AppDeps, realm: DigestRealm, user: DigestRealm["users"][number], now: Date, afterId: number): Promise<boolean> {
  return withTx(deps.pool, async (tx) => {
    if (!(await claimDigest(tx, realm.realmId, user.userId, now, lastWeekStart(now)))) return false;
    const since = digestWindowStart(now, user.lastActive);
    const hot = pickHotTopics(await selectDigestTopics(tx, realm.realmId, user.userId, since, now, afterId));
    const teasers: Array<Awaited<ReturnType<typeof selectDigestTeasers>>> = [];
    for (const t of hot) teasers.push(await selectDigestTeasers(tx, realm.realmId, user.userId, t, since, now, afterId, TEASER_MESSAGES));
    const senders = await getUsersByIds(deps, realm.realmId, teasers.flat().map((m) => m.senderId));
    const conversations: DigestConversation[] = hot.map((t, i) => ({
      ...t,
      teasers: teasers[i].map((m) => ({ senderName: senders.get(m.senderId)?.fullName ?? "Unknown user", renderedContent: m.renderedContent })),
    }));
    const newChannels = await selectNewDigestChannels(tx, realm.realmId, user.userId, since, now, user.role !== GUEST_ROLE);
    const newUsers = realm.joined.filter((j) => j.userId !== user.userId && j.dateJoined > since).length;
    const info = await deps.accounts.getRealm(realm.realmId);
    const mail = digestMail({
      realmName: info.name,
      realmUrl: organizationUrl(deps.config, info.string_id),
      fullName: user.fullName,
      conversations,
      newChannels,
      newUsers,
    });
    if (!mail) return false;
    await queueMail(tx, { to: user.deliveryEmail, subject: mail.subject, text: mail.text, html: mail.html, fromName: info.name });
    await markDigestMailed(tx, realm.realmId, user.userId);
    return true;
  });
}
