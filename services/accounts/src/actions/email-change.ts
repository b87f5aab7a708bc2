import { ApiError, badRequest, organizationUrl, queueMail, withTx, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { isEmailPublic } from "../lib/avatar";
import { hashApiKey, randomToken } from "../lib/credentials";
import { confirmNewEmailMail, emailChangedMail } from "../lib/email-change-mails";
import { INVITE_REFUSALS } from "../lib/email-validation";
import { ROLE } from "../lib/format";
import { canSeeDeliveryEmail } from "../lib/user-settings";
import { isValidEmail } from "../lib/validate";
import { emailVisibilityOf } from "../queries/profile";
import { getRealmEmailValidator } from "../queries/realm-domains";
import {
  deleteExpiredEmailChanges,
  emailChangeTimesSince,
  getUnusedEmailChangeByKeyHash,
  insertEmailChange,
  lockUnusedEmailChangeByKeyHash,
  markEmailChangeUsed,
  otherUsersWithEmail,
  setDeliveryEmail,
  type EmailChangeRow,
} from "../store/email-changes";
import { getProfileUser, type ProfileUser } from "../store/profile";
import { getRealm, type RealmRow } from "../store/realms";
import { listRealmUsers } from "../store/users";
import { notifyAvatar, notifyRealmUserUpdate } from "./profile";

/**
 * How long the link of an email change works. The reference does not say; Zulip's confirmation
 * links default to one day (CONFIRMATION_LINK_DEFAULT_VALIDITY_DAYS), which email changes use.
 */
export const EMAIL_CHANGE_VALIDITY_HOURS = 24;

/** Zulip's `email_change_by_user` rate limit: 2 requests an hour and 5 a day per user. */
const EMAIL_CHANGE_RATE_RULES = [
  { seconds: 3600, max: 2 },
  { seconds: 86_400, max: 5 },
];

const CHANGES_DISABLED = "Email address changes are disabled in this organization.";

/** Why `user` may not take `email` now (changes disabled, address taken), or null. */
async function emailChangeProblem(db: Queryable, realm: RealmRow, user: ProfileUser, email: string): Promise<string | null> {
  if (realm.emailChangesDisabled && user.role > ROLE.administrator) return CHANGES_DISABLED;
  // Zulip's validate_email_not_already_in_realm (its short texts); the API email counts too, as
  // the new address may become this user's API email.
  const others = await otherUsersWithEmail(db, realm.id, user.id, email);
  if (others.some((u) => u.isActive)) return "Email is already in use.";
  if (others.length) return "Account has been deactivated.";
  return null;
}

/**
 * PATCH /settings `email` (Zulip's json_change_settings, then do_start_email_change_process), in
 * the settings transaction with the user's row locked (which also serializes the rate limit).
 * The same address again does nothing. Otherwise, in Zulip's order: bots are refused, changes
 * disabled by the organization (administrators excepted), an invalid or refused address, one
 * in use; then the rate limit counts the request. Nothing changes but a link mailed to the new
 * address. True when a link was mailed.
 */
export async function doStartEmailChangeInTx(tx: Queryable, deps: AccountsDeps, user: ProfileUser, rawEmail: string): Promise<boolean> {
  // Zulip's PATCH /settings is for humans only (its human_users_only decorator).
  if (user.isBot) throw badRequest("This endpoint does not accept bot requests.");
  const email = rawEmail.trim();
  if (email === user.deliveryEmail) return false;
  const realm = await getRealm(tx, user.realmId);
  if (!realm) throw badRequest("No such user");
  if (realm.emailChangesDisabled && user.role > ROLE.administrator) throw badRequest(CHANGES_DISABLED);
  const refused = isValidEmail(email) ? (await getRealmEmailValidator(tx, realm))(email) : "invalid";
  if (refused) throw badRequest(refused === "invalid" ? "Invalid address." : INVITE_REFUSALS[refused]);
  // Zulip looks the address up case-insensitively, and finds this very user for a change of case.
  const problem = email.toLowerCase() === user.deliveryEmail.toLowerCase() ? "Email is already in use." : await emailChangeProblem(tx, realm, user, email);
  if (problem) throw badRequest(problem);
  const now = deps.clock.now();
  await checkEmailChangeRateLimit(tx, user, now);
  await forgetExpiredEmailChanges(tx, now);

  const key = randomToken();
  const expiresAt = new Date(now.getTime() + EMAIL_CHANGE_VALIDITY_HOURS * 3_600_000);
  await insertEmailChange(tx, { realmId: realm.id, userId: user.id, oldEmail: user.deliveryEmail, newEmail: email, keyHash: hashApiKey(key), requestedAt: now, expiresAt });
  const realmUrl = organizationUrl(deps.config, realm.stringId);
  const link = `${realmUrl}/accounts/confirm_new_email/${key}`;
  await queueMail(tx, confirmNewEmailMail({ to: email, oldEmail: user.deliveryEmail, realmName: realm.name, realmUrl, link, validHours: EMAIL_CHANGE_VALIDITY_HOURS }));
  return true;
}

/**
 * Each request of the last day is a row of email_changes, so the rules are counted there: over
 * either, Zulip's RateLimitedError, with the seconds until a request is allowed again.
 */
async function checkEmailChangeRateLimit(tx: Queryable, user: ProfileUser, now: Date): Promise<void> {
  const longest = Math.max(...EMAIL_CHANGE_RATE_RULES.map((r) => r.seconds));
  const times = await emailChangeTimesSince(tx, user.realmId, user.id, new Date(now.getTime() - longest * 1000));
  let waitMs = 0;
  for (const rule of EMAIL_CHANGE_RATE_RULES) {
    const inWindow = times.filter((t) => t.getTime() > now.getTime() - rule.seconds * 1000);
    // Allowed again when the max-th newest leaves the window.
    if (inWindow.length >= rule.max) waitMs = Math.max(waitMs, inWindow[rule.max - 1].getTime() + rule.seconds * 1000 - now.getTime());
  }
  if (!waitMs) return;
  const seconds = waitMs / 1000;
  throw new ApiError("RATE_LIMIT_HIT", "API usage exceeded rate limit", { extra: { "retry-after": seconds }, headers: { "Retry-After": String(seconds) } });
}

/**
 * Expired changes are of no use but to the rate limit, which counts a day of requests: past both,
 * they go, a few at each request that makes or confirms one (as password resets and sign-ups go).
 */
async function forgetExpiredEmailChanges(tx: Queryable, now: Date): Promise<void> {
  const longest = Math.max(...EMAIL_CHANGE_RATE_RULES.map((r) => r.seconds));
  await deleteExpiredEmailChanges(tx, now, new Date(now.getTime() - longest * 1000), 100);
}

/** What the link's page is about: the change, and why it cannot be made now (or null). */
export interface EmailChangeLink {
  change: EmailChangeRow;
  realm: RealmRow;
  problem: string | null;
}

/**
 * The user and organization of an unused, unexpired change, when it can still apply: both
 * active, and the user's address still the one the change started from (another change
 * confirmed since voids it). Null otherwise: the link is dead.
 */
async function usableLink(db: Queryable, change: EmailChangeRow | null, lockUser: boolean): Promise<{ realm: RealmRow; user: ProfileUser } | null> {
  if (!change) return null;
  const realm = await getRealm(db, change.realmId);
  const user = await getProfileUser(db, change.realmId, change.userId, { lock: lockUser });
  if (!realm || realm.deactivated || !user || !user.isActive || user.deliveryEmail !== change.oldEmail) return null;
  return { realm, user };
}

/** GET of the link: what the page shows; null when the link is unknown, used, expired or void. Changes nothing. */
export async function getEmailChangeByKey(deps: AccountsDeps, key: string): Promise<EmailChangeLink | null> {
  const change = await getUnusedEmailChangeByKeyHash(deps.pool, hashApiKey(key), deps.clock.now());
  const found = await usableLink(deps.pool, change, false);
  if (!change || !found) return null;
  return { change, realm: found.realm, problem: await emailChangeProblem(deps.pool, found.realm, found.user, change.newEmail) };
}

/**
 * POST of the link (Zulip's confirm_email_change): the organization's rules again (changes
 * disabled since, the address taken since: the page says so and the link stays), then the change
 * and the notice to the old address. The key works once.
 */
export async function doConfirmEmailChange(deps: AccountsDeps, key: string): Promise<EmailChangeLink | null> {
  const now = deps.clock.now();
  try {
    return await withTx(deps.pool, async (tx) => {
      await forgetExpiredEmailChanges(tx, now);
      const change = await lockUnusedEmailChangeByKeyHash(tx, hashApiKey(key), now);
      const found = await usableLink(tx, change, true);
      if (!change || !found) return null;
      const { realm, user } = found;
      // Two users taking one address at once: the second waits here, then sees it taken.
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('accounts.email-change'), hashtext(lower($1)))", [change.newEmail]);
      const problem = await emailChangeProblem(tx, realm, user, change.newEmail);
      if (problem) return { change, realm, problem };
      await markEmailChangeUsed(tx, change.id, now);
      await changeDeliveryEmailInTx(tx, deps, user, change.newEmail);
      const realmUrl = organizationUrl(deps.config, realm.stringId);
      await queueMail(tx, emailChangedMail({ to: change.oldEmail, newEmail: change.newEmail, realmName: realm.name, realmUrl }));
      return { change, realm, problem: null };
    });
  } catch (err) {
    // The API email is unique: an account made with the address meanwhile (not by a change).
    if ((err as { code?: string }).code !== "23505") throw err;
    const link = await getEmailChangeByKey(deps, key);
    return link && { ...link, problem: link.problem ?? "Email is already in use." };
  }
}

/**
 * Zulip's do_change_user_delivery_email: the delivery email, and the API email with it when the
 * address is visible to everyone. Those who may see the address get it (`delivery_email`); a
 * Gravatar follows the address, so the avatar fields again; a public address is everyone's new
 * API email (`new_email`). Each event carries the user's new summary, on which the gateway
 * drops its cached credential checks (the old address must stop authenticating).
 */
async function changeDeliveryEmailInTx(tx: Queryable, deps: AccountsDeps, user: ProfileUser, email: string): Promise<void> {
  const visibility = await emailVisibilityOf(tx, user.realmId, user.id);
  const isPublic = isEmailPublic(visibility);
  await setDeliveryEmail(tx, user.realmId, user.id, email, isPublic);
  const viewers = (await listRealmUsers(tx, user.realmId)).filter((v) => v.isActive && canSeeDeliveryEmail(v, user.id, visibility)).map((v) => v.id);
  await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, delivery_email: email }, viewers);
  if (user.avatarSource === "G") await notifyAvatar(tx, deps, user.realmId, user.id);
  if (isPublic) await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, new_email: email });
}
