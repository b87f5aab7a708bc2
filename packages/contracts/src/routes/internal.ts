import { z } from "zod";
import { UserSummary } from "../models";
import { p } from "../params";
import { route, success, type ServiceName } from "../route";

/**
 * Service-to-service routes. Never exposed by the gateway (auth "internal"); called with the
 * internal token through the platform's InternalClient, parameters Zulip-encoded.
 */

/** The gateway's credential check. Errors carry the exact Zulip `msg` for the 401. */
export const InternalAuthenticate = route({
  method: "POST",
  path: "/internal/authenticate",
  service: "accounts",
  auth: "internal",
  params: { email: p.str().required(), api_key: p.str().required() },
  response: success({
    user_id: z.number().int(),
    realm_id: z.number().int(),
    role: z.number().int(),
    is_bot: z.boolean(),
    email: z.string(),
  }),
});

/** User lookup for services that keep a replica: by ids (any status) within one realm. */
export const InternalGetUsers = route({
  method: "GET",
  path: "/internal/users",
  service: "accounts",
  auth: "internal",
  params: {
    realm_id: p.int().required(),
    user_ids: p.json(z.array(z.number().int())),
    emails: p.json(z.array(z.string())),
  },
  response: success({ users: z.array(UserSummary) }),
});

/** Admin CLI: create an organization with its first owner. */
export const InternalCreateRealm = route({
  method: "POST",
  path: "/internal/realms",
  service: "accounts",
  auth: "internal",
  params: {
    name: p.str().required(),
    string_id: p.str(),
    owner_email: p.str().required(),
    owner_full_name: p.str().required(),
    owner_password: p.str(),
  },
  response: success({
    realm_id: z.number().int(),
    string_id: z.string(),
    owner: z.object({ user_id: z.number().int(), email: z.string(), api_key: z.string() }),
  }),
});

/** Admin CLI: create a user of any role, or a bot owned by `bot_owner_id`. */
export const InternalCreateUser = route({
  method: "POST",
  path: "/internal/users",
  service: "accounts",
  auth: "internal",
  params: {
    realm_id: p.int().required(),
    email: p.str().required(),
    full_name: p.str().required(),
    role: p.int().default(400),
    password: p.str(),
    bot_type: p.int(),
    bot_owner_id: p.int(),
  },
  response: success({ user_id: z.number().int(), email: z.string(), api_key: z.string() }),
});

/** Admin CLI: replace a user's API key; the old one stops working at once. */
export const InternalResetApiKey = route({
  method: "POST",
  path: "/internal/users/api_key/reset",
  service: "accounts",
  auth: "internal",
  params: { realm_id: p.int().required(), email: p.str().required() },
  response: success({ user_id: z.number().int(), email: z.string(), api_key: z.string() }),
});

/** Parameters POST /register passes to every service that contributes initial state. */
export const registerStateParams = {
  /** Event types whose state is wanted; null means all. */
  fetch_event_types: p.json(z.array(z.string()).nullable()).nullable(),
  client_capabilities: p.json(z.record(z.string(), z.unknown())).default({}),
  include_subscribers: p.bool().default(false),
  client_gravatar: p.bool().default(true),
  apply_markdown: p.bool().default(false),
  narrow: p.json(z.array(z.unknown())).default([]),
};

/**
 * The slice of POST /register's initial state that one service owns (accounts: realm,
 * realm_user, user groups, status, linkifiers; messaging: subscription, message, drafts, ...;
 * scheduler: scheduled_messages). The caller's identity rides on the internal headers. The
 * events service calls every service in parallel and merges the objects.
 */
export function registerStateRoute(service: Exclude<ServiceName, "gateway" | "events">) {
  return route({
    method: "POST",
    path: `/internal/register_state/${service}`,
    service,
    auth: "user",
    params: registerStateParams,
    response: z.record(z.string(), z.unknown()),
  });
}
export const AccountsRegisterState = registerStateRoute("accounts");
export const MessagingRegisterState = registerStateRoute("messaging");
export const SchedulerRegisterState = registerStateRoute("scheduler");
