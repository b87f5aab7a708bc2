import { z } from "zod";
import { p } from "../params";
import { route, success } from "../route";

export const GetServerSettings = route({
  method: "GET",
  path: "/server_settings",
  service: "accounts",
  auth: "none",
  params: {},
  response: success({
    authentication_methods: z.record(z.string(), z.boolean()),
    external_authentication_methods: z.array(z.unknown()),
    zulip_feature_level: z.number().int(),
    zulip_version: z.string(),
    zulip_merge_base: z.string(),
    push_notifications_enabled: z.boolean(),
    is_incompatible: z.boolean(),
    email_auth_enabled: z.boolean(),
    require_email_format_usernames: z.boolean(),
    realm_url: z.string().optional(),
    realm_uri: z.string().optional(),
    realm_name: z.string().optional(),
    realm_icon: z.string().optional(),
    realm_description: z.string().optional(),
    realm_web_public_access_enabled: z.boolean().optional(),
  }),
});

export const FetchApiKey = route({
  method: "POST",
  path: "/fetch_api_key",
  service: "accounts",
  auth: "none",
  params: { username: p.str().required(), password: p.str().required() },
  response: success({ api_key: z.string(), email: z.string(), user_id: z.number().int() }),
});
