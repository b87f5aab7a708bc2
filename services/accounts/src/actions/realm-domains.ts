import { AccountsRealmDomainsChanged, type RealmDomainsClientEvent } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { domainError } from "../lib/email-validation";
import { countRealmDomains, deleteRealmDomain, insertRealmDomain, realmDomainTaken, setRealmDomainSubdomains } from "../store/realm-domains";
import { lockRealm, updateRealmSettings, type RealmRow } from "../store/realms";
import { activeUserIds } from "../store/users";
import { requireRealmAdmin } from "./linkifiers";
import { notifyRealmSettingChanged } from "./realm-settings";

const noEntry = (domain: string) => badRequest(`No entry found for domain ${domain}.`);

/** Every change goes to the organization's active users (Zulip's send_event to active_user_ids). */
async function notifyRealmDomains(tx: Queryable, realmId: number, event: RealmDomainsClientEvent): Promise<void> {
  const users = await activeUserIds(tx, realmId);
  await emitEvent(tx, {
    type: "accounts.realm_domains.changed",
    realmId,
    payload: AccountsRealmDomainsChanged.parse({ client: { event, users } }),
  });
}

/**
 * Changes under the organization row's lock: serialized with each other and with PATCH /realm,
 * so that removing the last domain sees the restriction as it is, and events keep commit order.
 */
function changeRealmDomains<T>(deps: AccountsDeps, realmId: number, change: (tx: Queryable, realm: RealmRow) => Promise<T>): Promise<T> {
  return withTx(deps.pool, async (tx) => {
    const realm = await lockRealm(tx, realmId);
    if (!realm) throw badRequest("Invalid organization");
    return change(tx, realm);
  });
}

/**
 * POST /realm/domains (Zulip's create_realm_domain): the domain is stripped and lowercased,
 * then checked as Zulip's validate_domain does. Returns the new row's id and domain.
 */
export async function doAddRealmDomain(deps: AccountsDeps, who: Identity, rawDomain: string, allowSubdomains: boolean): Promise<[number, string]> {
  requireRealmAdmin(who);
  const domain = rawDomain.trim().toLowerCase();
  const error = domainError(domain);
  if (error) throw badRequest(`Invalid domain: ${error}`);
  return changeRealmDomains(deps, who.realmId, async (tx) => {
    if (await realmDomainTaken(tx, who.realmId, domain)) throw badRequest(`The domain ${domain} is already a part of your organization.`);
    const row = await insertRealmDomain(tx, who.realmId, domain, allowSubdomains);
    await notifyRealmDomains(tx, who.realmId, { type: "realm_domains", op: "add", realm_domain: { domain: row.domain, allow_subdomains: row.allowSubdomains } });
    return [row.id, row.domain];
  });
}

/**
 * PATCH /realm/domains/{domain} (Zulip's patch_realm_domain): the domain as stored; announced
 * even when the value is the one it had, as Zulip's do_change_realm_domain does.
 */
export async function doChangeRealmDomain(deps: AccountsDeps, who: Identity, domain: string, allowSubdomains: boolean): Promise<void> {
  requireRealmAdmin(who);
  await changeRealmDomains(deps, who.realmId, async (tx) => {
    const row = await setRealmDomainSubdomains(tx, who.realmId, domain, allowSubdomains);
    if (!row) throw noEntry(domain);
    await notifyRealmDomains(tx, who.realmId, { type: "realm_domains", op: "change", realm_domain: { domain: row.domain, allow_subdomains: row.allowSubdomains } });
  });
}

/**
 * DELETE /realm/domains/{domain} (Zulip's do_remove_realm_domain). The last domain of an
 * organization restricted to its domains takes the restriction with it (it would let no one in);
 * that setting's `realm` event comes first, as in Zulip.
 */
export async function doRemoveRealmDomain(deps: AccountsDeps, who: Identity, domain: string): Promise<void> {
  requireRealmAdmin(who);
  await changeRealmDomains(deps, who.realmId, async (tx, realm) => {
    if (!(await deleteRealmDomain(tx, realm.id, domain))) throw noEntry(domain);
    if (realm.emailsRestrictedToDomains && (await countRealmDomains(tx, realm.id)) === 0) {
      await updateRealmSettings(tx, realm.id, new Map([["emails_restricted_to_domains", false]]));
      await notifyRealmSettingChanged(tx, realm.id, "emails_restricted_to_domains", false, await activeUserIds(tx, realm.id));
    }
    await notifyRealmDomains(tx, realm.id, { type: "realm_domains", op: "remove", domain });
  });
}
