import type { BotService } from "@chat/contracts";
import { badRequest } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { getBotService, type BotServiceRow } from "../store/bot-services";

/** A service as Zulip's `services` lists give it. */
export function serviceObject(s: BotServiceRow): BotService {
  return { base_url: s.baseUrl, interface: s.interface, token: s.token };
}

/**
 * GET /internal/bots/{bot_id}/service: the outgoing webhook bot's service, for messaging to post
 * the messages that trigger it. A deactivated bot's too (its row stays): whether a message may
 * trigger the bot is messaging's decision. Another organization's bot, a human or a bot without
 * a service is "No such bot" alike.
 */
export async function getInternalBotService(deps: AccountsDeps, realmId: number, botId: number): Promise<BotService> {
  const service = await getBotService(deps.pool, realmId, botId);
  if (!service) throw badRequest("No such bot");
  return serviceObject(service);
}
