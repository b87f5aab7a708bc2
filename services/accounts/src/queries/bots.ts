import type { BotObject } from "@chat/contracts";
import type { Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { avatarUrl } from "../lib/avatar";
import { listBotIds, listProfileUsers, type ProfileUser } from "../store/profile";

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
