import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "@chat/contracts";
import { ApiError, organizationUrl } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { realmIconUrl } from "../lib/avatar";
import { getRealmByStringId, getSoleRealm, type RealmRow } from "../store/realms";

export const AUTHENTICATION_METHODS = {
  password: true,
  dev: false,
  email: true,
  ldap: false,
  remoteuser: false,
  github: false,
  azuread: false,
  gitlab: false,
  apple: false,
  google: false,
  saml: false,
  "openid connect": false,
};

/** Zulip's answer on a host that names no organization (HostDomainMiddleware, api_fetch_api_key). */
export const nonexistentSubdomain = () => new ApiError("NONEXISTENT_SUBDOMAIN", "Invalid subdomain", { status: 404 });

/** The organization an organization's own host (a subdomain) names; 404 when none has that subdomain. */
export async function realmOfSubdomain(deps: AccountsDeps, subdomain: string): Promise<RealmRow> {
  const realm = await getRealmByStringId(deps.pool, subdomain);
  if (!realm) throw nonexistentSubdomain();
  return realm;
}

/**
 * GET /server_settings. On an organization's own host (`subdomain`), that organization's fields
 * and URL; on the deployment's host, the organization's only when it hosts exactly one, as
 * Zulip's root domain of a multi-organization server leaves them out (realm_url is then the
 * deployment's).
 */
export async function getServerSettings(deps: AccountsDeps, subdomain: string | null) {
  const realm = subdomain === null ? await getSoleRealm(deps.pool) : await realmOfSubdomain(deps, subdomain);
  const url = organizationUrl(deps.config, realm?.stringId ?? "");
  return {
    authentication_methods: AUTHENTICATION_METHODS,
    external_authentication_methods: [],
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_version: ZULIP_VERSION,
    zulip_merge_base: ZULIP_MERGE_BASE,
    push_notifications_enabled: deps.config.PUSH_NOTIFICATIONS_ENABLED,
    is_incompatible: false,
    email_auth_enabled: true,
    require_email_format_usernames: true,
    realm_url: url,
    realm_uri: url,
    ...(realm
      ? {
          realm_name: realm.name,
          realm_icon: realmIconUrl(realm.id),
          realm_description: realm.description,
          realm_web_public_access_enabled: realm.enableSpectatorAccess,
        }
      : {}),
  };
}
