import type { RealmDomain } from "@chat/contracts";
import { badRequest, type Queryable } from "@chat/platform";
import { emailRefusal, type EmailRefusal, type EmailRefusals } from "../lib/email-validation";
import type { RealmRow } from "../store/realms";
import { listRealmDomains } from "../store/realm-domains";

/**
 * The organization's allowed email domains, oldest first: GET /realm/domains (for any of its
 * users, as Zulip's list_realm_domains) and register's `realm_domains`.
 */
export async function getRealmDomains(db: Queryable, realmId: number): Promise<RealmDomain[]> {
  return (await listRealmDomains(db, realmId)).map((d) => ({ domain: d.domain, allow_subdomains: d.allowSubdomains }));
}

/**
 * Zulip's get_realm_email_validator: the organization's domains are read once, so that a list
 * of addresses (an invitation) is checked with one query. Reads the domains only when the
 * organization is restricted to them.
 */
export async function getRealmEmailValidator(
  db: Queryable,
  realm: Pick<RealmRow, "id" | "emailsRestrictedToDomains" | "disallowDisposableEmailAddresses">,
): Promise<(email: string) => EmailRefusal | null> {
  const domains = realm.emailsRestrictedToDomains ? await getRealmDomains(db, realm.id) : [];
  const rules = { emailsRestrictedToDomains: realm.emailsRestrictedToDomains, disallowDisposableEmailAddresses: realm.disallowDisposableEmailAddresses, domains };
  return (email) => emailRefusal(rules, email);
}

/** Throws the refusal's text when the organization does not let this address in. */
export async function checkEmailAllowedForRealm(
  db: Queryable,
  realm: Pick<RealmRow, "id" | "emailsRestrictedToDomains" | "disallowDisposableEmailAddresses">,
  email: string,
  refusals: EmailRefusals,
): Promise<void> {
  const refusal = (await getRealmEmailValidator(db, realm))(email);
  if (refusal) throw badRequest(refusals[refusal](email));
}
