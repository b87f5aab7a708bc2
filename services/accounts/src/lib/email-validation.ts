/**
 * An organization's rules for the addresses of new users, as Zulip's zerver/lib/domains.py,
 * name_restrictions.py and email_validation.py have them: what a realm domain may look like,
 * which addresses are disposable, and which addresses an organization lets in. Pure.
 */
import { isDisposableEmailDomain } from "disposable-email-domains-js";
import type { RealmDomain } from "@chat/contracts";

/**
 * Zulip's validate_domain: the reason a (stripped, lowercased) domain is not one, or null. The
 * reasons in Zulip's order and words; the caller prefixes "Invalid domain: ".
 */
export function domainError(domain: string): string | null {
  if (!domain.length) return "Domain can't be empty.";
  if (!domain.includes(".")) return "Domain must have at least one dot (.)";
  if ([...domain].length > 255) return "Domain is too long";
  if (domain.startsWith(".") || domain.endsWith(".")) return "Domain cannot start or end with a dot (.)";
  for (const label of domain.split(".")) {
    if (!label) return "Consecutive '.' are not allowed.";
    if (label.startsWith("-") || label.endsWith("-")) return "Subdomains cannot start or end with a '-'.";
    if (!/^[a-z0-9-]*$/.test(label)) return "Domain can only have letters, numbers, '.' and '-'s.";
  }
  return null;
}

/**
 * Listed as disposable, yet the addresses of real people: Zulip's WHITELISTED_EMAIL_DOMAINS
 * (Abine's masked addresses).
 */
const NOT_DISPOSABLE = new Set(["opayq.com", "abinemail.com", "blurmail.net", "maskmemail.com"]);

/**
 * Zulip's is_disposable_domain: the domain itself (not its parents) is on the list Zulip uses,
 * the disposable-email-domains project's blocklist, which `disposable-email-domains-js` ships.
 */
export function isDisposableDomain(domain: string): boolean {
  const d = domain.toLowerCase();
  return !NOT_DISPOSABLE.has(d) && isDisposableEmailDomain(d);
}

/** Why an organization refuses an address (Zulip's three exceptions of email_validation.py). */
export type EmailRefusal = "domain" | "disposable" | "plus";

export interface RealmEmailRules {
  emailsRestrictedToDomains: boolean;
  disallowDisposableEmailAddresses: boolean;
  domains: RealmDomain[];
}

/** The part before the last `@`, and the part after it. */
function splitAddress(email: string): [string, string] {
  const at = email.lastIndexOf("@");
  return [email.slice(0, at), email.slice(at + 1)];
}

/**
 * Zulip's get_realm_email_validator: why an organization refuses a (syntactically valid)
 * address, or null. Restricted to its domains, an address must be at one of them, or under one
 * that allows subdomains, and have no `+` in its local part; then nothing is disposable (the
 * organization chose its domains). Otherwise only disposable addresses are refused, if the
 * organization says so.
 */
export function emailRefusal(rules: RealmEmailRules, email: string): EmailRefusal | null {
  const [local, rawDomain] = splitAddress(email);
  if (!rules.emailsRestrictedToDomains) {
    return rules.disallowDisposableEmailAddresses && isDisposableDomain(rawDomain) ? "disposable" : null;
  }
  if (local.includes("+")) return "plus";
  let domain = rawDomain.toLowerCase();
  if (rules.domains.some((d) => d.domain === domain)) return null;
  const withSubdomains = new Set(rules.domains.filter((d) => d.allow_subdomains).map((d) => d.domain));
  // Each parent of the address's domain in turn: a.b.example.com, then b.example.com, ...
  while (domain.includes(".")) {
    domain = domain.slice(domain.indexOf(".") + 1);
    if (withSubdomains.has(domain)) return null;
  }
  return "domain";
}

/** The error text for each refusal, given the address. */
export type EmailRefusals = Record<EmailRefusal, (email: string) => string>;

/** What Zulip's invitations say of a refused address, per address (validate_email_is_valid). */
export const INVITE_REFUSALS: Record<EmailRefusal, string> = {
  domain: "Outside your domain.",
  disposable: "Please use your real email address.",
  plus: "Email addresses containing + are not allowed.",
};

/** What Zulip's POST /users answers for a refused address (create_user_backend). */
export const CREATE_USER_REFUSALS: EmailRefusals = {
  domain: (email) => `Email '${email}' not allowed in this organization`,
  disposable: () => "Disposable email addresses are not allowed in this organization",
  plus: () => "Email addresses containing + are not allowed.",
};

/** What Zulip's sign-up form says of a refused address (HomepageForm.clean_email). */
export const SIGNUP_REFUSALS: EmailRefusals = {
  domain: (email) => `Your email address, ${email}, is not in one of the domains that are allowed to register for accounts in this organization.`,
  disposable: () => "Please use your real email address.",
  plus: () => "Email addresses containing + are not allowed.",
};
