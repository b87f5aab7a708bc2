import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "@chat/contracts";
import type { AccountsDeps } from "../deps";
import { realmIconUrl } from "../lib/avatar";
import { getSoleRealm } from "../store/realms";

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

/** GET /server_settings. Realm fields appear when this server hosts exactly one organization. */
export async function getServerSettings(deps: AccountsDeps) {
  const realm = await getSoleRealm(deps.pool);
  const url = deps.config.EXTERNAL_URL.replace(/\/+$/, "");
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
