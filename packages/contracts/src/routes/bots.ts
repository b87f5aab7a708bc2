import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";
import { UrlString } from "../url";

/** Bot types: 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded. */
export const BOT_TYPES = [1, 2, 3, 4] as const;

/**
 * One of the caller's active bots in GET /bots. Unlike Zulip there is no `api_key`: keys are
 * stored only as hashes; POST /bots/{id}/api_key/regenerate issues a new one.
 */
export const BotObject = z.strictObject({
  user_id: z.number().int(),
  username: z.string(),
  full_name: z.string(),
  avatar_url: z.string(),
  default_sending_stream: z.string().nullable(),
  default_events_register_stream: z.string().nullable(),
  default_all_public_streams: z.boolean(),
  bot_type: z.number().int(),
  owner_id: z.number().int(),
});
export type BotObject = z.infer<typeof BotObject>;

/** How an outgoing webhook bot's service posts: 1 Zulip's generic format, 2 Slack's. */
export const SERVICE_INTERFACES = [1, 2] as const;

/**
 * An outgoing webhook bot's service as Zulip's realm_bot events give it (`services`): where
 * the messages that trigger the bot are posted, in which format, and the token sent along.
 */
export const BotService = z.strictObject({ base_url: z.string(), interface: z.number().int(), token: z.string() });
export type BotService = z.infer<typeof BotService>;

/**
 * A bot as register's `realm_bots` and realm_bot / add give it (Zulip's Bot), to those who
 * administer it; deactivated bots too (`is_active`). Unlike Zulip there is no `api_key`, as in
 * GET /bots: keys are stored only as hashes, and events rest in queues in clear. Bots here never
 * have default channels.
 */
export const RealmBot = z.strictObject({
  email: z.string(),
  user_id: z.number().int(),
  full_name: z.string(),
  bot_type: z.number().int(),
  is_active: z.boolean(),
  default_sending_stream: z.string().nullable(),
  default_events_register_stream: z.string().nullable(),
  default_all_public_streams: z.boolean(),
  owner_id: z.number().int().nullable(),
  avatar_url: z.string(),
  /** An outgoing webhook bot's one service; empty for the other types. */
  services: z.array(BotService),
});
export type RealmBot = z.infer<typeof RealmBot>;

/**
 * Create a bot owned by the caller. Its email is `<short_name>-bot@<realm bot domain>`; the API
 * key is returned once, here. An outgoing webhook bot (type 3) gets its service: `payload_url`
 * (required for it), `interface_type` (default 1), `service_name` (default the short name).
 */
export const CreateBot = route({
  method: "POST",
  path: "/bots",
  service: "accounts",
  auth: "user",
  params: {
    full_name: p.str().required(),
    short_name: p.str().required(),
    bot_type: p.int().default(1),
    payload_url: p.json(UrlString),
    interface_type: p.int(),
    service_name: p.str(),
    config_data: p.json(z.record(z.string(), z.string())),
  },
  response: success({
    user_id: z.number().int(),
    api_key: z.string(),
    avatar_url: z.string(),
    default_sending_stream: z.string().nullable(),
    default_events_register_stream: z.string().nullable(),
    default_all_public_streams: z.boolean(),
  }),
});

/** The caller's active bots. */
export const GetBots = route({
  method: "GET",
  path: "/bots",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({ bots: z.array(BotObject) }),
});

/** Same list under the caller's own path. */
export const GetOwnBots = route({
  method: "GET",
  path: "/users/me/bots",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({ bots: z.array(BotObject) }),
});

/**
 * Owner or administrator edits a bot: full name, owner (must be an active human of the
 * organization), role (administrators), an outgoing webhook bot's service URL and interface.
 * `service_payload_url` / `service_interface` answer the service's values (null for a bot
 * without one).
 */
export const UpdateBot = route({
  method: "PATCH",
  path: "/bots/{bot_id}",
  service: "accounts",
  auth: "user",
  params: {
    bot_id: p.int().path(),
    full_name: p.str(),
    bot_owner_id: p.int(),
    role: p.int(),
    service_payload_url: p.json(UrlString),
    service_interface: p.int(),
  },
  response: success({
    full_name: z.string(),
    avatar_url: z.string(),
    default_sending_stream: z.string().nullable(),
    default_events_register_stream: z.string().nullable(),
    default_all_public_streams: z.boolean(),
    service_interface: z.number().int().nullable(),
    service_payload_url: z.string().nullable(),
    config_data: z.record(z.string(), z.string()).nullable(),
    bot_owner: z.string().optional(),
  }),
});

export const DeactivateBot = route({
  method: "DELETE",
  path: "/bots/{bot_id}",
  service: "accounts",
  auth: "user",
  params: { bot_id: p.int().path() },
  response: empty,
});

export const RegenerateBotApiKey = route({
  method: "POST",
  path: "/bots/{bot_id}/api_key/regenerate",
  service: "accounts",
  auth: "user",
  params: { bot_id: p.int().path() },
  response: success({ api_key: z.string() }),
});
