import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/**
 * A domain whose addresses may join the organization (Zulip's RealmDomain): with
 * `allow_subdomains`, its subdomains' addresses too. Stored lowercased.
 */
export const RealmDomain = z.strictObject({
  domain: z.string(),
  allow_subdomains: z.boolean(),
});
export type RealmDomain = z.infer<typeof RealmDomain>;

/** Any user of the organization may list them (Zulip's list_realm_domains has no role check). */
export const ListRealmDomains = route({
  method: "GET",
  path: "/realm/domains",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({ domains: z.array(RealmDomain) }),
});

/**
 * Administrators only. `domain` is stripped and lowercased before it is checked; the answer is
 * Zulip's `new_domain`: `[id, domain]` of the stored row.
 */
export const CreateRealmDomain = route({
  method: "POST",
  path: "/realm/domains",
  service: "accounts",
  auth: "user",
  params: { domain: p.str().required(), allow_subdomains: p.bool().required() },
  response: success({ new_domain: z.tuple([z.number().int(), z.string()]) }),
});

/** Administrators only; `domain` is matched as stored (lowercase), as Zulip's lookup does. */
export const UpdateRealmDomain = route({
  method: "PATCH",
  path: "/realm/domains/{domain}",
  service: "accounts",
  auth: "user",
  params: { domain: p.str().path(), allow_subdomains: p.bool().required() },
  response: empty,
});

/** Administrators only. Removing the last domain turns `emails_restricted_to_domains` off. */
export const DeleteRealmDomain = route({
  method: "DELETE",
  path: "/realm/domains/{domain}",
  service: "accounts",
  auth: "user",
  params: { domain: p.str().path() },
  response: empty,
});
