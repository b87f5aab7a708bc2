import { ApiError, emitEvent, withTx } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { dummyPasswordCheck, generateApiKey, hashApiKey, sealApiKey, unsealApiKey, verifyPassword } from "../lib/credentials";
import { authFailed } from "../queries/auth";
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
