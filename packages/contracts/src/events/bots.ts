import { z } from "zod";
import { BotService, RealmBot } from "../routes/bots";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/**
 * Client event `realm_bot` / update carrying an outgoing webhook bot's `services` (always one),
 * as Zulip's do_update_outgoing_webhook_service sends it to those who administer the bot.
 */
export const RealmBotServicesUpdateEvent = z.strictObject({
  type: z.literal("realm_bot"),
  op: z.literal("update"),
  bot: z.strictObject({ user_id: z.number().int(), services: z.array(BotService) }),
});
export type RealmBotServicesUpdateEvent = z.infer<typeof RealmBotServicesUpdateEvent>;

/**
 * Client event `realm_bot` / add: the whole bot, to those who now administer it (its creation,
 * a new owner who is not an administrator, a user who became one).
 */
export const RealmBotAddEvent = z.strictObject({ type: z.literal("realm_bot"), op: z.literal("add"), bot: RealmBot });
export type RealmBotAddEvent = z.infer<typeof RealmBotAddEvent>;

/** Client event `realm_bot` / update: the bot's id and the one field that changed. */
export const RealmBotUpdateEvent = z.strictObject({
  type: z.literal("realm_bot"),
  op: z.literal("update"),
  bot: z.strictObject({
    user_id: z.number().int(),
    full_name: z.string().optional(),
    avatar_url: z.string().optional(),
    owner_id: z.number().int().optional(),
    is_active: z.boolean().optional(),
    services: z.array(BotService).optional(),
  }),
});
export type RealmBotUpdateEvent = z.infer<typeof RealmBotUpdateEvent>;

/**
 * Client event `realm_bot` / delete: the bot leaves the receiver's `realm_bots` (an owner who is
 * not an administrator gave it away, an administrator stopped being one). Zulip's `remove`
 * (deactivation) is not sent since feature level 222: deactivation is an update of `is_active`.
 */
export const RealmBotDeleteEvent = z.strictObject({
  type: z.literal("realm_bot"),
  op: z.literal("delete"),
  bot: z.strictObject({ user_id: z.number().int() }),
});
export type RealmBotDeleteEvent = z.infer<typeof RealmBotDeleteEvent>;

export const RealmBotClientEvent = z.union([RealmBotAddEvent, RealmBotUpdateEvent, RealmBotDeleteEvent]);
export type RealmBotClientEvent = z.infer<typeof RealmBotClientEvent>;

/**
 * An outgoing webhook bot's service changed (its URL or interface; the token never does):
 * `service` is the whole new value, for whoever keeps one; the client event goes to the bot's
 * owner and the organization's administrators.
 */
export const AccountsBotServiceUpdated = defineEvent(
  "accounts.bot_service.updated",
  z.object({ user_id: z.number().int(), service: BotService, client: noticeOf(RealmBotServicesUpdateEvent) }),
);

/**
 * What register's `realm_bots` shows of bot `user_id` changed for the notice's users (created,
 * renamed, new avatar or owner, deactivated or reactivated, or the users' own role changed what
 * they administer). Only clients care: other services learn of bots through the user events.
 */
export const AccountsRealmBotChanged = defineEvent(
  "accounts.realm_bot.changed",
  z.object({ user_id: z.number().int(), client: noticeOf(RealmBotClientEvent) }),
);
