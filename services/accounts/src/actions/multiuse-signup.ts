import { organizationUrl, queueMail, withTx } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { hashApiKey, randomToken } from "../lib/credentials";
import { SIGNUP_REFUSALS } from "../lib/email-validation";
import { multiuseSignupMail } from "../lib/multiuse-signup-mails";
import { isValidEmail } from "../lib/validate";
import { getMultiuseSignupByKey } from "../queries/multiuse-signup";
import { getRealmEmailValidator } from "../queries/realm-domains";
import {
  claimMultiuseSignup,
  countMultiuseSignupsSince,
  deleteMultiuseSignupsBefore,
  insertMultiuseSignup,
  lockUsableMultiuseLink,
  releaseMultiuseSignup,
  type MultiuseLinkRow,
} from "../store/multiuse-signups";
import type { RealmRow } from "../store/realms";
import { getUsersByAddresses } from "../store/users";
import { linkExpired } from "./invites";
import { checkSendsEmailByIp } from "./mail-requests";
import { doAcceptMultiuseInvite } from "./multiuse-invites";

/**
 * How long a sign-up confirmation works. The reference notes give no validity for it, so a day
 * (Zulip's default for confirmation links); confirmations are deleted after it.
 */
export const SIGNUP_CONFIRMATION_HOURS = 24;
const DAY_MS = 86_400_000;

/**
 * Confirmation mails an address gets a day, across organizations: Zulip's `sends_email_by_ip`
 * (5 a day) counted per address rather than per IP, so that nobody floods a mailbox through
 * reusable links, whatever addresses they come from.
 */
export const SIGNUP_MAILS_PER_ADDRESS_PER_DAY = 5;

/** What became of an address given on `/join/{key}/`. */
export type MultiuseSignupRequest =
  | { kind: "expired" }
  | { kind: "refused"; error: string }
  | { kind: "registered"; email: string }
  | { kind: "limited"; email: string }
  | { kind: "sent"; email: string };

/** Zulip's words for a deactivated account (its login form's, where its sign-up sends a known address). */
export const deactivatedAccount = (email: string) =>
  `Your account ${email} has been deactivated. Please contact your organization administrator to reactivate it.`;

/**
 * POST /join/{key}/, as Zulip's accounts_home for a multiuse invite: the address as a sign-up
 * through the link checks it (its form, then the organization's domain and disposable rules),
 * an existing account is pointed to logging in, then the address is mailed a confirmation link
 * (at most SIGNUP_MAILS_PER_ADDRESS_PER_DAY a day, and within the client address's
 * `sends_email_by_ip` limit: Zulip's rate-limit error past it). Only the link's key's hash is
 * kept. The reusable link is the one getMultiuseLink found; it is checked again under lock.
 */
export async function doRequestMultiuseSignup(
  deps: AccountsDeps,
  { link, realm }: { link: MultiuseLinkRow; realm: RealmRow },
  rawEmail: string,
  ip: string,
): Promise<MultiuseSignupRequest> {
  const email = rawEmail.trim();
  // Django's EmailField's words.
  if (!isValidEmail(email)) return { kind: "refused", error: "Enter a valid email address." };
  const refusal = (await getRealmEmailValidator(deps.pool, realm))(email);
  if (refusal) return { kind: "refused", error: SIGNUP_REFUSALS[refusal](email) };
  // By API email or real address (an account whose address is hidden has a stand-in API email).
  const holders = await getUsersByAddresses(deps.pool, realm.id, [email]);
  const existing = holders.find((u) => u.isActive) ?? holders[0];
  if (existing) return existing.isActive ? { kind: "registered", email } : { kind: "refused", error: deactivatedAccount(email) };

  const now = deps.clock.now();
  return withTx(deps.pool, async (tx): Promise<MultiuseSignupRequest> => {
    // One address's requests in turn, so that the daily number holds under concurrency.
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('accounts.multiuse-signups'), hashtext(lower($1)))", [email]);
    // A revocation waits for this mail, or this sees the link revoked.
    if (!(await lockUsableMultiuseLink(tx, link.id, now))) return { kind: "expired" };
    const dayAgo = new Date(now.getTime() - DAY_MS);
    // Past their validity and the daily count, confirmations go; a few at each request suffice.
    await deleteMultiuseSignupsBefore(tx, dayAgo, 100);
    if ((await countMultiuseSignupsSince(tx, email, dayAgo)) >= SIGNUP_MAILS_PER_ADDRESS_PER_DAY) return { kind: "limited", email };
    await checkSendsEmailByIp(tx, ip, now);
    const confirmationKey = randomToken();
    await insertMultiuseSignup(tx, {
      realmId: realm.id,
      multiuseInviteId: link.id,
      email,
      keyHash: hashApiKey(confirmationKey),
      createdAt: now,
      expiresAt: new Date(now.getTime() + SIGNUP_CONFIRMATION_HOURS * 3_600_000),
    });
    const realmUrl = organizationUrl(deps.config, realm.stringId);
    await queueMail(
      tx,
      multiuseSignupMail({
        to: email,
        realmName: realm.name,
        realmUrl,
        link: `${realmUrl}/accounts/do_confirm_signup/${confirmationKey}`,
        validForHours: SIGNUP_CONFIRMATION_HOURS,
      }),
    );
    return { kind: "sent", email };
  });
}

/**
 * POST /accounts/do_confirm_signup/{key}: creates the account through the reusable link, by
 * doAcceptMultiuseInvite (the link's role; its channels by the consumer of
 * `accounts.invite.accepted`), which refuses a link revoked or expired by now. The confirmation
 * is claimed first, so that it makes one account, and given back if the sign-up fails (the
 * visitor may correct the form).
 */
export async function doCompleteMultiuseSignup(deps: AccountsDeps, key: string, p: { fullName: string; password: string }) {
  const found = await getMultiuseSignupByKey(deps, key);
  if (!found || !(await claimMultiuseSignup(deps.pool, found.signup.id, deps.clock.now()))) throw linkExpired();
  const { signup, link } = found;
  try {
    return await doAcceptMultiuseInvite(deps, { realmId: signup.realmId, key: link.confirmationKey, email: signup.email, fullName: p.fullName, password: p.password });
  } catch (err) {
    await releaseMultiuseSignup(deps.pool, signup.id);
    throw err;
  }
}
