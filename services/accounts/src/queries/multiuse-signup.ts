import type { AccountsDeps } from "../deps";
import { hashApiKey } from "../lib/credentials";
import {
  getUsableMultiuseLink,
  getUsableMultiuseLinkByKey,
  getUsableMultiuseSignupByKeyHash,
  type MultiuseLinkRow,
  type MultiuseSignupRow,
} from "../store/multiuse-signups";
import { getRealm, type RealmRow } from "../store/realms";

async function activeRealm(deps: AccountsDeps, realmId: number): Promise<RealmRow | null> {
  const realm = await getRealm(deps.pool, realmId);
  return realm && !realm.deactivated ? realm : null;
}

/** The reusable link `/join/{key}/` names and its organization; null when the link is not (or no longer) usable. */
export async function getMultiuseLink(deps: AccountsDeps, key: string): Promise<{ link: MultiuseLinkRow; realm: RealmRow } | null> {
  const link = await getUsableMultiuseLinkByKey(deps.pool, key, deps.clock.now());
  const realm = link && (await activeRealm(deps, link.realmId));
  return link && realm ? { link, realm } : null;
}

/**
 * The confirmation a sign-up mail's link carries, while it is unused and unexpired and the
 * reusable link it came from is still usable; else null.
 */
export async function getMultiuseSignupByKey(deps: AccountsDeps, key: string): Promise<{ signup: MultiuseSignupRow; link: MultiuseLinkRow; realm: RealmRow } | null> {
  const now = deps.clock.now();
  const signup = await getUsableMultiuseSignupByKeyHash(deps.pool, hashApiKey(key), now);
  const link = signup && (await getUsableMultiuseLink(deps.pool, signup.multiuseInviteId, now));
  const realm = link && (await activeRealm(deps, link.realmId));
  return signup && link && realm ? { signup, link, realm } : null;
}
