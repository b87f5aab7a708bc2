import { ApiError, unauthorized } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { hashApiKey, hashesEqual, hasApiKeyFormat } from "../lib/credentials";
import { keyHashesOf } from "../store/api-keys";
import { getRealm, type RealmRow } from "../store/realms";
import { findUsersByLoginEmail, type UserRow } from "../store/users";

/**
 * The gateway's credential check (Zulip's `validate_api_key`): the key format first, then the
 * accounts with this email, each key hash compared in constant time. Unknown email and wrong key
 * give the same answer.
 */
export async function authenticateApiKey(deps: AccountsDeps, rawEmail: string, rawKey: string): Promise<{ user: UserRow; realm: RealmRow }> {
  const email = rawEmail.trim();
  const key = rawKey.trim();
  if (!hasApiKeyFormat(key)) throw unauthorized("Malformed API key");
  const hash = hashApiKey(key);
  const candidates = email ? await findUsersByLoginEmail(deps.pool, email) : [];
  const keys = candidates.length ? await keyHashesOf(deps.pool, candidates.map((u) => u.id)) : [];
  let matched: UserRow | null = null;
  // Compare against every candidate key (no early exit) so timing does not depend on which matched.
  for (const k of keys) {
    if (hashesEqual(k.keyHash, hash) && !matched) matched = candidates.find((u) => u.id === k.userId) ?? null;
  }
  if (!keys.length) hashesEqual(hash, hashApiKey("0".repeat(32)));
  if (!matched) throw unauthorized("Invalid API key");
  const realm = await getRealm(deps.pool, matched.realmId);
  if (!realm || realm.deactivated) throw unauthorized("This organization has been deactivated");
  if (!matched.isActive) throw unauthorized("Account is deactivated");
  return { user: matched, realm };
}

export const authFailed = () =>
  new ApiError("AUTHENTICATION_FAILED", "Your username or password is incorrect", { status: 401 });
