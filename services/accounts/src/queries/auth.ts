import { ApiError, unauthorized } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { hashApiKey, hashesEqual, hasApiKeyFormat } from "../lib/credentials";
import { keyHashesOf, selectKeyOwner } from "../store/api-keys";
import { getRealm, type RealmRow } from "../store/realms";
import { findUsersByLoginEmail, getUser, type UserRow } from "../store/users";

/**
 * The gateway's credential check (Zulip's `validate_api_key`): the key format first, then the
 * accounts with this email, each key hash compared in constant time. Unknown email and wrong key
 * give the same answer. Without an email (an integration URL's `api_key`) the key's hash finds
 * its user, as Zulip's get_user_profile_by_api_key.
 */
export async function authenticateApiKey(deps: AccountsDeps, rawEmail: string | undefined, rawKey: string): Promise<{ user: UserRow; realm: RealmRow }> {
  const key = rawKey.trim();
  if (!hasApiKeyFormat(key)) throw unauthorized("Malformed API key");
  const hash = hashApiKey(key);
  const matched = rawEmail === undefined ? await userOfKey(deps, hash) : await userOfEmailAndKey(deps, rawEmail.trim(), hash);
  if (!matched) throw unauthorized("Invalid API key");
  const realm = await getRealm(deps.pool, matched.realmId);
  if (!realm || realm.deactivated) throw unauthorized("This organization has been deactivated");
  if (!matched.isActive) throw unauthorized("Account is deactivated");
  return { user: matched, realm };
}

async function userOfKey(deps: AccountsDeps, hash: string): Promise<UserRow | null> {
  const owner = await selectKeyOwner(deps.pool, hash);
  return owner ? getUser(deps.pool, owner.realmId, owner.userId) : null;
}

async function userOfEmailAndKey(deps: AccountsDeps, email: string, hash: string): Promise<UserRow | null> {
  const candidates = email ? await findUsersByLoginEmail(deps.pool, email) : [];
  const keys = candidates.length ? await keyHashesOf(deps.pool, candidates.map((u) => u.id)) : [];
  let matched: UserRow | null = null;
  // Compare against every candidate key (no early exit) so timing does not depend on which matched.
  for (const k of keys) {
    if (hashesEqual(k.keyHash, hash) && !matched) matched = candidates.find((u) => u.id === k.userId) ?? null;
  }
  if (!keys.length) hashesEqual(hash, hashApiKey("0".repeat(32)));
  return matched;
}

export const authFailed = () =>
  new ApiError("AUTHENTICATION_FAILED", "Your username or password is incorrect", { status: 401 });
