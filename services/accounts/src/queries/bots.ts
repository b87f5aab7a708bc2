import type { BotObject, RealmBot } from "@chat/contracts";
import type { Identity, Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { avatarUrl } from "../lib/avatar";
import { ROLE } from "../lib/format";
import { listBotServices, type BotServiceRow } from "../store/bot-services";
import { listBotIds, listBots, listProfileUsers, type ProfileUser } from "../store/profile";
import type { UserRow } from "../store/users";
import { serviceObject } from "./bot-services";

export function botObject(bot: ProfileUser): BotObject {
  return {
    user_id: bot.id,
    username: bot.email,
    full_name: bot.fullName,
    avatar_url: avatarUrl(bot, { clientGravatar: false })!,
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
    bot_type: bot.botType ?? 1,
    owner_id: bot.botOwnerId!,
  };
}

/** GET /bots: the caller's active bots, as Zulip lists them. */
export async function getOwnBots(deps: AccountsDeps, who: Identity): Promise<BotObject[]> {
  const ids = await listBotIds(deps.pool, who.realmId, who.userId);
  const bots = await listProfileUsers(deps.pool, who.realmId, ids);
  return bots.filter((b) => b.isActive).map(botObject);
}

/** A bot as `realm_bots` lists it (Zulip's get_owned_bot_dicts); the avatar always a full URL. */
export function realmBotObject(bot: ProfileUser, service: BotServiceRow | null): RealmBot {
  return {
    email: bot.email,
    user_id: bot.id,
    full_name: bot.fullName,
    bot_type: bot.botType ?? 1,
    is_active: bot.isActive,
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
    owner_id: bot.botOwnerId,
    avatar_url: avatarUrl(bot, { clientGravatar: false })!,
    services: service ? [serviceObject(service)] : [],
  };
}

/** The organization's bots, or those `ownerId` owns, deactivated ones too, by id. */
export async function listRealmBots(db: Queryable, realmId: number, ownerId: number | null): Promise<RealmBot[]> {
  const bots = await listBots(db, realmId, ownerId);
  const services = new Map((await listBotServices(db, realmId, bots.map((b) => b.id))).map((s) => [s.botId, s]));
  return bots.map((b) => realmBotObject(b, services.get(b.id) ?? null));
}

/**
 * Whether a user administers every bot of the organization, not only their own: its human
 * administrators, who are also the ones realm_bot events reach (Zulip also counts administrator
 * bots for register, but never sends them the events that would keep that list current).
 */
export const administersAllBots = (u: Pick<UserRow, "role" | "isBot">) => !u.isBot && u.role <= ROLE.administrator;

/** Register's `realm_bots`: the bots the user administers. */
export async function realmBotsState(deps: AccountsDeps, me: UserRow): Promise<{ realm_bots: RealmBot[] }> {
  return { realm_bots: await listRealmBots(deps.pool, me.realmId, administersAllBots(me) ? null : me.id) };
}
