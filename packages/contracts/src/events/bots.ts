import { z } from "zod";
import { BotService } from "../routes/bots";
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
 * An outgoing webhook bot's service changed (its URL or interface; the token never does):
 * `service` is the whole new value, for whoever keeps one; the client event goes to the bot's
 * owner and the organization's administrators.
 */
export const AccountsBotServiceUpdated = defineEvent(
  "accounts.bot_service.updated",
  z.object({ user_id: z.number().int(), service: BotService, client: noticeOf(RealmBotServicesUpdateEvent) }),
);
