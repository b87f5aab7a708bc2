import { badRequest, organizationUrl, queueMail, withTx, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { hashApiKey, hashPassword, longEnoughPassword, randomToken } from "../lib/credentials";
import { passwordResetMail, passwordResetNoAccountMail } from "../lib/password-reset-mails";
import { isValidEmail } from "../lib/validate";
import { checkSendsEmailByIp } from "./mail-requests";
import {
  countPasswordResetRequestsSince,
  deleteExpiredPasswordResetKeys,
  deletePasswordResetRequestsBefore,
  forgetSealedApiKeys,
  getUsablePasswordResetKey,
  getUsersByDeliveryEmailAnywhere,
  insertPasswordResetKey,
  insertPasswordResetRequest,
  lockUsablePasswordResetKey,
  usePasswordResetKeys,
  type PasswordResetKeyRow,
} from "../store/password-resets";
import { setPasswordHash } from "../store/profile";
import { getRealm, type RealmRow } from "../store/realms";
import { getUser, lockUser, type UserRow } from "../store/users";

/** How long a reset link works: a day, as Zulip's; long enough to find the mail, short for a leaked one. */
export const PASSWORD_RESET_VALIDITY_HOURS = 24;

/**
 * Zulip's `password_reset_form_by_email` rule: at most 2 requests per hour and 5 per day for one
 * address. Requests beyond it send nothing and are not counted (as Zulip's limiter).
 */
export const PASSWORD_RESET_LIMITS = [
  { seconds: 3600, max: 2 },
  { seconds: 86_400, max: 5 },
];

const HOUR_MS = 3_600_000;

/** Whoever may set a password through a reset link: an active human of an active organization. */
const resettable = (user: UserRow, realm: RealmRow | null | undefined): realm is RealmRow => user.isActive && !user.isBot && !!realm && !realm.deactivated;

/** Counts this request against the address's limit; false (and nothing counted) when over it. */
async function checkResetRateLimit(tx: Queryable, emailHash: string, now: Date): Promise<boolean> {
  // One address's requests one at a time, so concurrent ones cannot all pass the limit.
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('accounts.password_reset'), hashtext($1))", [emailHash]);
  for (const rule of PASSWORD_RESET_LIMITS) {
    const since = new Date(now.getTime() - rule.seconds * 1000);
    if ((await countPasswordResetRequestsSince(tx, emailHash, since)) >= rule.max) return false;
  }
  await insertPasswordResetRequest(tx, emailHash, now);
  return true;
}

async function queueResetLink(tx: Queryable, deps: AccountsDeps, user: UserRow, realm: RealmRow, now: Date): Promise<void> {
  const key = randomToken();
  // The key travels only in the mail; only its hash is kept.
  const expiresAt = new Date(now.getTime() + PASSWORD_RESET_VALIDITY_HOURS * HOUR_MS);
  await insertPasswordResetKey(tx, { realmId: realm.id, userId: user.id, keyHash: hashApiKey(key), createdAt: now, expiresAt });
  const realmUrl = organizationUrl(deps.config, realm.stringId);
  await queueMail(
    tx,
    passwordResetMail({
      to: user.deliveryEmail,
      realmName: realm.name,
      realmUrl,
      link: `${realmUrl}/accounts/password/reset/${key}`,
      validHours: PASSWORD_RESET_VALIDITY_HOURS,
    }),
  );
}

/**
 * The reset form sent to the deployment's host (`hostRealm` null: every organization where the
 * address has an account) or to an organization's own host (only that organization's; none when
 * it is deactivated). Each active human account with that delivery address (case-insensitive) is
 * mailed a link. An address with none there is told so, unless it belongs to an account that
 * cannot reset (a bot, a deactivated user or organization), which gets nothing. The caller's page is the same in
 * every case, so it cannot tell whether an address has an account. Past the address's limit
 * nothing happens; past the client address's (`ip`), Zulip's rate-limit error.
 */
export async function doRequestPasswordReset(deps: AccountsDeps, email: string, hostRealm: RealmRow | null, ip: string): Promise<void> {
  const address = email.trim();
  if (!isValidEmail(address)) throw badRequest("Please enter a valid email address.");
  const now = deps.clock.now();
  const emailHash = hashApiKey(address.toLowerCase());
  await withTx(deps.pool, async (tx) => {
    if (!(await checkResetRateLimit(tx, emailHash, now))) return;
    // A deactivated organization's host mails nobody, as it serves no account.
    if (hostRealm?.deactivated) return;
    await checkSendsEmailByIp(tx, ip, now);
    await deletePasswordResetRequestsBefore(tx, new Date(now.getTime() - 24 * HOUR_MS));
    await deleteExpiredPasswordResetKeys(tx, now);
    const users = await getUsersByDeliveryEmailAnywhere(tx, address, null);
    const realms = new Map<number, RealmRow | null>();
    for (const u of users) if (!realms.has(u.realmId)) realms.set(u.realmId, await getRealm(tx, u.realmId));
    const here = users.filter((u) => hostRealm === null || u.realmId === hostRealm.id);
    const targets = here.filter((u) => resettable(u, realms.get(u.realmId)));
    for (const u of targets) await queueResetLink(tx, deps, u, realms.get(u.realmId)!, now);
    if (targets.length || here.length) return;
    const elsewhere = users.filter((u) => resettable(u, realms.get(u.realmId))).map((u) => realms.get(u.realmId)!);
    await queueMail(
      tx,
      passwordResetNoAccountMail({
        to: address,
        url: organizationUrl(deps.config, hostRealm?.stringId ?? ""),
        accountsElsewhere: elsewhere.map((r) => ({ realmName: r.name, realmUrl: organizationUrl(deps.config, r.stringId) })),
      }),
    );
  });
}

export interface PasswordResetTarget {
  user: UserRow;
  realm: RealmRow;
}

/** A link is for its organization: on another organization's host it is unknown. */
const onItsHost = (realm: RealmRow, subdomain: string | null) => subdomain === null || realm.stringId === subdomain;

/** Whose password a reset link sets; null when the link is unknown, used, expired, or its account cannot reset. */
export async function getPasswordResetByKey(deps: AccountsDeps, key: string, subdomain: string | null): Promise<PasswordResetTarget | null> {
  const row = await getUsablePasswordResetKey(deps.pool, hashApiKey(key), deps.clock.now());
  return row && targetOf(deps.pool, row, subdomain, false);
}

async function targetOf(db: Queryable, row: PasswordResetKeyRow, subdomain: string | null, lock: boolean): Promise<PasswordResetTarget | null> {
  const user = lock ? await lockUser(db, row.realmId, row.userId) : await getUser(db, row.realmId, row.userId);
  const realm = await getRealm(db, row.realmId);
  return user && resettable(user, realm) && onItsHost(realm, subdomain) ? { user, realm } : null;
}

/**
 * The new-password form sent: checks the two fields agree and the password is long enough, then
 * sets it and uses up every outstanding link of the account. Null when the link is no longer
 * usable. The API keys stay valid (as Zulip's one key does); only their copies sealed under the
 * old password are forgotten, so the next POST /fetch_api_key issues a key under the new one.
 */
export async function doResetPassword(
  deps: AccountsDeps,
  key: string,
  p: { newPassword: string; confirm: string },
  subdomain: string | null,
): Promise<PasswordResetTarget | null> {
  if (p.newPassword !== p.confirm) throw badRequest("The two passwords do not match.");
  if (!longEnoughPassword(p.newPassword)) throw badRequest("The password is too weak.");
  // Outside the transaction: scrypt is slow.
  const hash = await hashPassword(p.newPassword, deps.config.PASSWORD_SCRYPT_COST);
  const now = deps.clock.now();
  return withTx(deps.pool, async (tx) => {
    const row = await lockUsablePasswordResetKey(tx, hashApiKey(key), now);
    const target = row && (await targetOf(tx, row, subdomain, true));
    if (!target) return null;
    await setPasswordHash(tx, target.user.realmId, target.user.id, hash);
    await forgetSealedApiKeys(tx, target.user.realmId, target.user.id);
    await usePasswordResetKeys(tx, target.user.realmId, target.user.id, now);
    return target;
  });
}
