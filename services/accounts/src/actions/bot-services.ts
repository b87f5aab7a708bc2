import { SERVICE_INTERFACES, type RealmBotServicesUpdateEvent } from "@chat/contracts";
import { badRequest, emitEvent, type Queryable } from "@chat/platform";
import { generateApiKey } from "../lib/credentials";
import { serviceObject } from "../queries/bot-services";
import { getBotService, insertBotService, updateBotService, type BotServiceRow } from "../store/bot-services";
import type { ProfileUser } from "../store/profile";
import { botAdministratorIds } from "./realm-bots";

/** Zulip's check_valid_interface_type. */
export function checkValidInterfaceType(value: number): void {
  if (!(SERVICE_INTERFACES as readonly number[]).includes(value)) throw badRequest("Invalid interface type");
}

/** Zulip's add_service, in the bot's creation transaction; the token is made as an API key is. */
export async function addBotServiceInTx(
  tx: Queryable,
  bot: Pick<ProfileUser, "id" | "realmId">,
  p: { name: string; baseUrl: string; interface: number },
): Promise<BotServiceRow> {
  return insertBotService(tx, { botId: bot.id, realmId: bot.realmId, name: p.name, baseUrl: p.baseUrl, interface: p.interface, token: generateApiKey() });
}

/**
 * Zulip's do_update_outgoing_webhook_service, for PATCH /bots/{bot_id}: a field not given keeps
 * its value, and nothing is announced when nothing changed. A bot without a service has nothing
 * to update (Zulip fails there with a server error): null.
 */
export async function updateBotServiceInTx(
  tx: Queryable,
  bot: ProfileUser,
  p: { baseUrl?: string; interface?: number },
): Promise<BotServiceRow | null> {
  const current = await getBotService(tx, bot.realmId, bot.id);
  if (!current) return null;
  const next = { baseUrl: p.baseUrl ?? current.baseUrl, interface: p.interface ?? current.interface };
  if (next.baseUrl === current.baseUrl && next.interface === current.interface) return current;
  const updated = (await updateBotService(tx, bot.realmId, bot.id, next))!;
  const service = serviceObject(updated);
  const event: RealmBotServicesUpdateEvent = { type: "realm_bot", op: "update", bot: { user_id: bot.id, services: [service] } };
  await emitEvent(tx, {
    type: "accounts.bot_service.updated",
    realmId: bot.realmId,
    payload: { user_id: bot.id, service, client: { event, users: await botAdministratorIds(tx, bot) } },
  });
  return updated;
}
