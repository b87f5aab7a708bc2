import { z } from "zod";
import { RealmDomain } from "../routes/realm-domains";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/** Client event `realm_domains` / add: a domain was allowed. */
export const RealmDomainsAddEvent = z.strictObject({
  type: z.literal("realm_domains"),
  op: z.literal("add"),
  realm_domain: RealmDomain,
});

/** Client event `realm_domains` / change: a domain's `allow_subdomains` was set. */
export const RealmDomainsChangeEvent = z.strictObject({
  type: z.literal("realm_domains"),
  op: z.literal("change"),
  realm_domain: RealmDomain,
});

/** Client event `realm_domains` / remove: a domain is no longer allowed. */
export const RealmDomainsRemoveEvent = z.strictObject({
  type: z.literal("realm_domains"),
  op: z.literal("remove"),
  domain: z.string(),
});

export const RealmDomainsClientEvent = z.union([RealmDomainsAddEvent, RealmDomainsChangeEvent, RealmDomainsRemoveEvent]);
export type RealmDomainsClientEvent = z.infer<typeof RealmDomainsClientEvent>;

/** The organization's allowed email domains changed; the client event goes to all its active users. */
export const AccountsRealmDomainsChanged = defineEvent(
  "accounts.realm_domains.changed",
  z.object({ client: noticeOf(RealmDomainsClientEvent) }),
);
