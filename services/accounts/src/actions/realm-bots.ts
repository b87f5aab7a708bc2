import type { RealmBot, RealmBotClientEvent, RealmBotUpdateEvent } from "@chat/contracts";
import { emitEvent, type Queryable } from "@chat/platform";
import { administersAllBots, listRealmBots, realmBotObject } from "../queries/bots";
import { getBotService } from "../store/bot-services";
import { getProfileUser } from "../store/profile";
import { activeHumanAdminIds, type UserRow } from "../store/users";

// realm_bot events keep each client's register `realm_bots` (the bots its user administers) current.

type BotRef = Pick<UserRow, "id" | "realmId" | "botOwnerId">;

/**
 * Who receives realm_bot events about a bot: Zulip's bot_owner_user_ids, the owner and the
 * organization's human administrators (its "owner only" case is for bots with a private default
 * channel, which bots here never have).
 */
export async function botAdministratorIds(tx: Queryable, bot: BotRef): Promise<number[]> {
  const ids = await activeHumanAdminIds(tx, bot.realmId);
  return [...new Set(bot.botOwnerId === null ? ids : [...ids, bot.botOwnerId])].sort((a, b) => a - b);
}

async function notifyRealmBot(tx: Queryable, realmId: number, botId: number, event: RealmBotClientEvent, users: number[]): Promise<void> {
  if (!users.length) return;
  await emitEvent(tx, { type: "accounts.realm_bot.changed", realmId, payload: { user_id: botId, client: { event, users } } });
}

async function realmBotInTx(tx: Queryable, realmId: number, botId: number): Promise<RealmBot> {
  const bot = (await getProfileUser(tx, realmId, botId))!;
  return realmBotObject(bot, await getBotService(tx, realmId, botId));
}

/** Zulip's notify_created_bot: the whole bot, its service included, to those who administer it. */
export async function notifyBotCreatedInTx(tx: Queryable, bot: BotRef): Promise<void> {
  const event: RealmBotClientEvent = { type: "realm_bot", op: "add", bot: await realmBotInTx(tx, bot.realmId, bot.id) };
  await notifyRealmBot(tx, bot.realmId, bot.id, event, await botAdministratorIds(tx, bot));
}

/**
 * One field of a bot's `realm_bots` entry changed (name, avatar, active): realm_bot update to
 * those who administer it. Nothing for humans and system bots, so user actions may call it for anyone.
 */
export async function notifyBotUpdateInTx(
  tx: Queryable,
  user: BotRef & Pick<UserRow, "isBot" | "isSystemBot">,
  change: Omit<RealmBotUpdateEvent["bot"], "user_id">,
): Promise<void> {
  if (!user.isBot || user.isSystemBot) return;
  const event: RealmBotUpdateEvent = { type: "realm_bot", op: "update", bot: { user_id: user.id, ...change } };
  await notifyRealmBot(tx, user.realmId, user.id, event, await botAdministratorIds(tx, user));
}

/**
 * Zulip's do_change_bot_owner, for `bot` with its new owner: the previous owner loses the bot
 * (delete) and the new one gains it whole (add), unless administrators, who list every bot and
 * learn only the new `owner_id` (update).
 */
export async function notifyBotOwnerChangedInTx(tx: Queryable, bot: BotRef, previousOwnerId: number | null): Promise<void> {
  const admins = await activeHumanAdminIds(tx, bot.realmId);
  if (previousOwnerId !== null && !admins.includes(previousOwnerId)) {
    await notifyRealmBot(tx, bot.realmId, bot.id, { type: "realm_bot", op: "delete", bot: { user_id: bot.id } }, [previousOwnerId]);
  }
  if (bot.botOwnerId === null) return;
  if (!admins.includes(bot.botOwnerId)) {
    const whole = await realmBotInTx(tx, bot.realmId, bot.id);
    await notifyRealmBot(tx, bot.realmId, bot.id, { type: "realm_bot", op: "add", bot: whole }, [bot.botOwnerId]);
  }
  await notifyRealmBot(tx, bot.realmId, bot.id, { type: "realm_bot", op: "update", bot: { user_id: bot.id, owner_id: bot.botOwnerId } }, admins);
}

/**
 * A role change that makes a user an administrator, or ends it, changes which bots they
 * administer: the others' bots come whole (add) or go (delete), so that a registered client's
 * `realm_bots` stays what a fresh register gives (applying the role alone cannot tell which bots
 * those are). Our own addition: Zulip's events say nothing of it.
 */
export async function notifyAdministeredBotsInTx(tx: Queryable, user: UserRow, before: number, after: number): Promise<void> {
  const was = administersAllBots({ ...user, role: before });
  const is = administersAllBots({ ...user, role: after });
  if (was === is || !user.isActive) return;
  for (const bot of await listRealmBots(tx, user.realmId, null)) {
    if (bot.owner_id === user.id) continue;
    const event: RealmBotClientEvent = is
      ? { type: "realm_bot", op: "add", bot }
      : { type: "realm_bot", op: "delete", bot: { user_id: bot.user_id } };
    await notifyRealmBot(tx, user.realmId, bot.user_id, event, [user.id]);
  }
}
