import { ApiError, emitEvent, organizationUrl, queueMail, withTx } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { dummyPasswordCheck, generateApiKey, hashApiKey, sealApiKey, unsealApiKey, verifyPassword } from "../lib/credentials";
import { newLoginMail } from "../lib/mails";
import { authFailed } from "../queries/auth";
import { getEffectiveSettings } from "../queries/settings";
import { realmOfSubdomain } from "../queries/server";
import { insertApiKey, newestSealedKey, pruneApiKeys } from "../store/api-keys";
import { getRealm } from "../store/realms";
import { findUsersByLoginEmail, type UserRow } from "../store/users";

/** How many client logins may hold a key at once; older ones are revoked first. */
const MAX_KEYS_PER_USER = 20;

/**
 * POST /fetch_api_key: checks the password (slow hash; a missing account costs the same time)
 * and answers with the user's login key, as Zulip answers with the user's one API key. Keys are
 * stored hashed, so the login key is also kept sealed under the password (sealApiKey): every
 * login with that password gets the same key back. The first login, or the first after an API
 * key reset, issues it. Before, each login issued a key of its own and the 21st revoked the
 * oldest, so a script logging in on every run soon locked out the user's other clients.
 * On an organization's own host (`subdomain`) only that organization's accounts can log in.
 */
export async function doFetchApiKey(deps: AccountsDeps, username: string, password: string, subdomain: string | null = null) {
  const realmId = subdomain === null ? null : (await realmOfSubdomain(deps, subdomain)).id;
  const candidates = (await findUsersByLoginEmail(deps.pool, username.trim())).filter((u) => u.passwordHash && (realmId === null || u.realmId === realmId));
  let matched: UserRow | null = null;
  if (!candidates.length || !password) {
    await dummyPasswordCheck(password, deps.config.PASSWORD_SCRYPT_COST);
  }
  for (const u of password ? candidates : []) {
    if (await verifyPassword(password, u.passwordHash!)) {
      matched = u;
      break;
    }
  }
  if (!matched) throw authFailed();
  // Only a correct password reveals the account's state. Zulip says an account or organization is
  // deactivated whatever the password; here a guess cannot learn it.
  const realm = await getRealm(deps.pool, matched.realmId);
  if (!realm || realm.deactivated) throw new ApiError("REALM_DEACTIVATED", "This organization has been deactivated", { status: 401 });
  if (!matched.isActive) throw new ApiError("USER_DEACTIVATED", "Account is deactivated", { status: 401 });
  const user = matched;
  const kept = await newestSealedKey(deps.pool, user.realmId, user.id);
  const keptKey = kept ? await unsealApiKey(kept.sealed, password) : null;
  if (keptKey !== null) return { user, apiKey: keptKey };
  const apiKey = generateApiKey();
  const sealed = await sealApiKey(apiKey, password, deps.config.PASSWORD_SCRYPT_COST);
  await withTx(deps.pool, async (tx) => {
    await insertApiKey(tx, user.realmId, user.id, hashApiKey(apiKey), sealed);
    const revoked = await pruneApiKeys(tx, user.realmId, user.id, MAX_KEYS_PER_USER);
    // Revoked keys must leave the gateway's credential cache too.
    if (revoked) await emitEvent(tx, { type: "accounts.api_key.reset", realmId: user.realmId, payload: { user_id: user.id, email: user.email } });
  });
  return { user, apiKey };
}

/** Zulip sends no login notice for an account made within the last minute (its sign-up's own login). */
const JUST_CREATED_MS = 60_000;

/**
 * Zulip's notice of a new login (its email_on_new_login): a password login mails the account's
 * address when, where and on what it happened, unless the user turned `enable_login_emails` off
 * or the account is brand new. A failure to queue it does not fail the login.
 */
export async function doNotifyNewLogin(deps: AccountsDeps, user: UserRow, userAgent: string | undefined): Promise<void> {
  const now = deps.clock.now();
  if (user.isBot || now.getTime() - user.dateJoined.getTime() < JUST_CREATED_MS) return;
  try {
    const settings = await getEffectiveSettings(deps.pool, user);
    if (settings.enable_login_emails !== true) return;
    const realm = await getRealm(deps.pool, user.realmId);
    if (!realm) return;
    const mail = newLoginMail({
      to: user.deliveryEmail,
      realmName: realm.name,
      realmUrl: organizationUrl(deps.config, realm.stringId),
      when: now,
      timezone: user.timezone,
      userAgent,
    });
    await queueMail(deps.pool, mail);
  } catch (err) {
    deps.log.warn({ err: (err as Error).message, userId: user.id }, "new-login mail not queued");
  }
}
