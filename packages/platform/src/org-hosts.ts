import { envBool } from "./config";

/**
 * Per-organization hosts, as Zulip's subdomains: with `ORGANIZATION_SUBDOMAINS` on, the
 * organization `acme` of a deployment at `https://chat.example.com` is reached at
 * `https://acme.chat.example.com`. That host serves only acme's accounts and names acme in
 * `GET /server_settings`, which is how a mobile app learns which organization it logs in to.
 * The deployment's own host keeps serving every organization's accounts.
 */
export const organizationHostsShape = {
  /**
   * Give each organization its own host below `EXTERNAL_URL`'s (`<string_id>.<host>`, Zulip's
   * subdomains; needs a wildcard DNS name and certificate). Such a host answers only for its
   * organization; `EXTERNAL_URL`'s own host still answers for all of them.
   */
  ORGANIZATION_SUBDOMAINS: envBool(false),
};

export interface OrganizationHosts {
  EXTERNAL_URL: string;
  ORGANIZATION_SUBDOMAINS: boolean;
}

/** An organization's URL (`realm_url`): the deployment's, or its own host's with subdomains. */
export function organizationUrl(config: OrganizationHosts, stringId: string): string {
  const base = config.EXTERNAL_URL.replace(/\/+$/, "");
  if (!config.ORGANIZATION_SUBDOMAINS || !stringId) return base;
  const url = new URL(base);
  url.hostname = `${stringId}.${url.hostname}`;
  return url.href.replace(/\/+$/, "");
}

/** EXTERNAL_URL's host name, parsed once per value (the gateway asks on every request). */
const baseHosts = new Map<string, string>();
function baseHostOf(externalUrl: string): string {
  let host = baseHosts.get(externalUrl);
  if (host === undefined) baseHosts.set(externalUrl, (host = new URL(externalUrl).hostname.toLowerCase()));
  return host;
}

/**
 * The organization subdomain a request's Host names: `acme` for `acme.chat.example.com[:port]`
 * under `chat.example.com`. Null without subdomains, for the deployment's own host and for any
 * other name (an address, a cluster-internal name): those are not an organization's host.
 */
export function subdomainOfHost(config: OrganizationHosts, host: string | undefined): string | null {
  if (!config.ORGANIZATION_SUBDOMAINS || !host || host.startsWith("[")) return null;
  const name = host.replace(/:\d*$/, "").replace(/\.$/, "").toLowerCase();
  const base = baseHostOf(config.EXTERNAL_URL);
  if (!name.endsWith(`.${base}`)) return null;
  const label = name.slice(0, -(base.length + 1));
  return label && !label.includes(".") ? label : null;
}
