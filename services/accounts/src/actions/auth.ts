import { ApiError, emitEvent, withTx } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { dummyPasswordCheck, generateApiKey, hashApiKey, verifyPassword } from "../lib/credentials";
import { authFailed } from "../queries/auth";
import { insertApiKey, pruneApiKeys } from "../store/api-keys";
import { getRealm } from "../store/realms";
import { findUsersByLoginEmail, type UserRow } from "../store/users";

/** How many client logins may hold a key at once; older ones are revoked first. */
const MAX_KEYS_PER_USER = 20;

/**
 * POST /fetch_api_key: checks the password (slow hash; a missing account costs the same time)
 * and issues a fresh key for this client. Keys are stored hashed, so an existing one cannot be
 * returned; every key of the user stays valid until an API key reset.
 */
export async function doFetchApiKey(deps: AccountsDeps, username: string, password: string) {
  const candidates = (await findUsersByLoginEmail(deps.pool, username.trim())).filter((u) => u.passwordHash);
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
  const apiKey = generateApiKey();
  await withTx(deps.pool, async (tx) => {
    await insertApiKey(tx, user.realmId, user.id, hashApiKey(apiKey));
    const revoked = await pruneApiKeys(tx, user.realmId, user.id, MAX_KEYS_PER_USER);
    // Revoked keys must leave the gateway's credential cache too.
    if (revoked) await emitEvent(tx, { type: "accounts.api_key.reset", realmId: user.realmId, payload: { user_id: user.id, email: user.email } });
  });
  return { user, apiKey };
}
