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
import { fetchDigestRecipients, type DigestRecipient } from "../lib/digest-recipients";
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
 * digest weekday (UTC), each of its users who is away (accounts says who, a page at a time) and
 * had no digest this past week gets one mail of the hot conversations of their channels, the new
 * channels and the number of people who joined since they were last active. The claim and the
 * mail commit together, so that a user gets one digest a week whichever process makes it.
 */

const GUEST_ROLE = 600;

/**
 * The away users asked of accounts at a time (its most): an organization of many thousands comes
 * in several answers rather than one huge one.
 */
export const DIGEST_RECIPIENTS_PAGE = 1000;

/** Makes today's due digests, walking accounts' pages of away users; returns how many were mailed. */
export async function doSendDigestEmails(deps: AppDeps, pageSize = DIGEST_RECIPIENTS_PAGE): Promise<number> {
  const now = deps.clock.now();
  const windowStart = new Date(now.getTime() - DIGEST_WINDOW_DAYS * 24 * 3600 * 1000);
  const query = { weekday: digestWeekday(now), inactiveSince: inactiveSince(now), joinedSince: windowStart };
  let afterMessageId: number | null = null;
  let mailed = 0;
  for (let afterUserId = 0; ; ) {
    const page = await fetchDigestRecipients(deps.config, { ...query, afterUserId, limit: pageSize });
    if (page.length === 0) break;
    // Every user's window lies within the last DIGEST_WINDOW_DAYS: no older message is read.
    afterMessageId ??= await selectLastMessageIdAtOrBefore(deps.pool, windowStart);
    mailed += await doSendDigestPage(deps, page, now, afterMessageId);
    if (page.length < pageSize) break;
    afterUserId = page[page.length - 1].userId;
  }
  return mailed;
}

/** The digests of one page of users, but those done this week (by this pass or another process). */
async function doSendDigestPage(deps: AppDeps, page: DigestRecipient[], now: Date, afterMessageId: number): Promise<number> {
  const done = new Set<number>();
  for (const realmId of new Set(page.map((u) => u.realmId))) {
    const ids = page.filter((u) => u.realmId === realmId).map((u) => u.userId);
    for (const id of await selectRecentDigests(deps.pool, realmId, ids, lastWeekStart(now))) done.add(id);
  }
  let mailed = 0;
  for (const user of page) {
    if (done.has(user.userId)) continue;
    try {
      if (await doSendDigestEmail(deps, user, now, afterMessageId)) mailed++;
    } catch (err) {
      // Left unclaimed: the next pass of the day tries again.
      deps.log.warn({ err: (err as Error).message, userId: user.userId }, "digest email failed; will retry");
    }
  }
  return mailed;
}

/** One user's digest: claimed, then mailed if there is anything to tell. True when mailed. */
async function doSendDigestEmail(deps: AppDeps, user: DigestRecipient, now: Date, afterId: number): Promise<boolean> {
  const { realmId } = user;
  return withTx(deps.pool, async (tx) => {
    if (!(await claimDigest(tx, realmId, user.userId, now, lastWeekStart(now)))) return false;
    const since = digestWindowStart(now, user.lastActive);
    const hot = pickHotTopics(await selectDigestTopics(tx, realmId, user.userId, since, now, afterId));
    const teasers: Array<Awaited<ReturnType<typeof selectDigestTeasers>>> = [];
    for (const t of hot) teasers.push(await selectDigestTeasers(tx, realmId, user.userId, t, since, now, afterId, TEASER_MESSAGES));
    const senders = await getUsersByIds(deps, realmId, teasers.flat().map((m) => m.senderId));
    const conversations: DigestConversation[] = hot.map((t, i) => ({
      ...t,
      teasers: teasers[i].map((m) => ({ senderName: senders.get(m.senderId)?.fullName ?? "Unknown user", renderedContent: m.renderedContent })),
    }));
    const newChannels = await selectNewDigestChannels(tx, realmId, user.userId, since, now, user.role !== GUEST_ROLE);
    const info = await deps.accounts.getRealm(realmId);
    const mail = digestMail({
      realmName: info.name,
      realmUrl: organizationUrl(deps.config, info.string_id),
      fullName: user.fullName,
      conversations,
      newChannels,
      newUsers: user.newUsers,
    });
    if (!mail) return false;
    await queueMail(tx, { to: user.deliveryEmail, subject: mail.subject, text: mail.text, html: mail.html, fromName: info.name });
    await markDigestMailed(tx, realmId, user.userId);
    return true;
  });
}
