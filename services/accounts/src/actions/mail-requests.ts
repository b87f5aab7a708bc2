import { ApiError, clientNetwork, type Queryable } from "@chat/platform";
import { deleteMailRequestsBefore, insertMailRequest, mailRequestTimesSince } from "../store/mail-requests";

/**
 * Zulip's `sends_email_by_ip` rule: the forms anyone may fill in without an account (password
 * reset, a reusable link's address form) send at most 5 mails a day for one client address,
 * whatever addresses it gives, so that nobody mails strangers through them at volume. An IPv6
 * client counts by its /64 (see clientNetwork), or each request could come from a fresh address
 * of it. The limits per recipient address come first and stay.
 */
export const SENDS_EMAIL_BY_IP = { seconds: 86_400, max: 5 };

/**
 * Counts a request from `ip` about to send mail, in the transaction that queues the mail. Over
 * the limit, Zulip's rate-limit error with the seconds until one is allowed again (the
 * transaction, and its mail, then roll back).
 */
export async function checkSendsEmailByIp(tx: Queryable, ip: string, now: Date): Promise<void> {
  const network = clientNetwork(ip);
  // One network's requests in turn, so that concurrent ones cannot all pass the limit.
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('accounts.sends_email_by_ip'), hashtext($1))", [network]);
  const windowMs = SENDS_EMAIL_BY_IP.seconds * 1000;
  const since = new Date(now.getTime() - windowMs);
  // Rows past the window count no more; a few go at each request.
  await deleteMailRequestsBefore(tx, since, 100);
  const times = await mailRequestTimesSince(tx, network, since);
  if (times.length >= SENDS_EMAIL_BY_IP.max) {
    // Allowed again when the max-th newest leaves the window.
    const seconds = (times[SENDS_EMAIL_BY_IP.max - 1].getTime() + windowMs - now.getTime()) / 1000;
    throw new ApiError("RATE_LIMIT_HIT", "Too many emails were requested from your network today.", {
      extra: { "retry-after": seconds },
      headers: { "Retry-After": String(seconds) },
    });
  }
  await insertMailRequest(tx, network, now);
}
