import { ApiError, badRequest, emitEvent, missingParam, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { generateApiKey, hashApiKey } from "../lib/credentials";
import { ROLE, VALID_ROLES } from "../lib/format";
import { checkFullName } from "../lib/validate";
import { deleteApiKeys, insertApiKey } from "../store/api-keys";
import { getBotService, type BotServiceRow } from "../store/bot-services";
import { getProfileUser, setBotOwner, type ProfileUser } from "../store/profile";
import { getRealm, lockRealm, type RealmRow } from "../store/realms";
import { activeUserHasFullName, getUserByEmail } from "../store/users";
import { addBotServiceInTx, checkValidInterfaceType, updateBotServiceInTx } from "./bot-services";
import { changeFullNameInTx, changeRoleInTx, checkUniqueFullNameInTx, deactivateBotInTx, notifyRealmUserUpdate, requireAdmin } from "./profile";
import { notifyBotCreatedInTx, notifyBotOwnerChangedInTx } from "./realm-bots";
import { createUserInTx } from "./users";

/** Bot types anyone may create here (embedded bots need server-side bot code we do not run). */
const CREATABLE_BOT_TYPES = [1, 2, 3];
const OUTGOING_WEBHOOK_BOT = 3;

/** Humans who are members or above may manage bots (Zulip's `require_member_or_admin`). */
function requireMemberOrAdmin(who: Identity) {
  if (who.isBot) throw badRequest("This endpoint does not accept bot requests.");
  if (who.role === ROLE.guest) throw badRequest("Not allowed for guest users");
}

async function checkBotNameAvailable(tx: Queryable, realmId: number, fullName: string, exceptId: number | null) {
  if (await activeUserHasFullName(tx, realmId, fullName, exceptId)) throw badRequest("Name is already in use!");
}

export interface CreateBotInput {
  fullName: string;
  shortName: string;
  botType: number;
  /** An outgoing webhook bot's service; the contract has checked that the URL is one. */
  payloadUrl?: string;
  interfaceType?: number;
  serviceName?: string;
}

/**
 * Zulip's check_bot_creation_policy: administrators always; otherwise the organization's
 * bot_creation_policy (1 everyone, 2 everyone but generic bots are for administrators,
 * 3 administrators only).
 */
function checkBotCreationPolicy(who: Identity, realm: RealmRow, botType: number): void {
  if (who.role <= ROLE.administrator || realm.botCreationPolicy === 1) return;
  if (realm.botCreationPolicy === 3 || (realm.botCreationPolicy === 2 && botType === 1)) requireAdmin(who);
}

/**
 * POST /bots: the bot belongs to the caller; its email is `<short_name>-bot@<bot domain>`. An
 * outgoing webhook bot gets its service in the same transaction. Zulip lets one be created
 * without `payload_url` (its service then posts nowhere); here it is required. As in Zulip,
 * `interface_type` is checked whatever the bot type, and the service parameters of other types
 * are ignored.
 */
export async function doCreateBot(deps: AccountsDeps, who: Identity, p: CreateBotInput): Promise<{ bot: ProfileUser; apiKey: string }> {
  requireMemberOrAdmin(who);
  const shortName = p.shortName.trim();
  if (!shortName || !/^[A-Za-z0-9._+-]+$/.test(shortName)) throw badRequest("Bad name or username");
  const fullName = checkFullName(p.fullName);
  if (p.botType === 4) throw badRequest("Embedded bots are not enabled.");
  if (!CREATABLE_BOT_TYPES.includes(p.botType)) throw badRequest("Invalid bot type");
  if (p.botType === OUTGOING_WEBHOOK_BOT && p.payloadUrl === undefined) throw missingParam("payload_url");
  const interfaceType = p.interfaceType ?? 1;
  return withTx(deps.pool, async (tx) => {
    const realm = await getRealm(tx, who.realmId);
    if (!realm) throw badRequest("Invalid organization");
    const email = `${shortName}-bot@${realm.stringId}.invalid`;
    if (await getUserByEmail(tx, who.realmId, email)) throw badRequest("Username already in use");
    // Zulip's order: check_full_name (unique names), then check_bot_name_available.
    await checkUniqueFullNameInTx(tx, realm, fullName, null);
    await checkBotNameAvailable(tx, who.realmId, fullName, null);
    checkBotCreationPolicy(who, realm, p.botType);
    checkValidInterfaceType(interfaceType);
    const { user, apiKey } = await createUserInTx(tx, deps, {
      realmId: who.realmId,
      email,
      fullName,
      role: ROLE.member,
      botType: p.botType,
      botOwnerId: who.userId,
    }).catch((err: unknown) => {
      // The same bot created at once by another request got the email between the check above
      // and the insert: the answer the check would have given.
      if (err instanceof ApiError && err.message === `Email '${email}' already in use`) throw badRequest("Username already in use");
      throw err;
    });
    if (p.botType === OUTGOING_WEBHOOK_BOT) {
      await addBotServiceInTx(tx, user, { name: p.serviceName || shortName, baseUrl: p.payloadUrl!, interface: interfaceType });
    }
    await notifyBotCreatedInTx(tx, user);
    return { bot: (await getProfileUser(tx, who.realmId, user.id))!, apiKey };
  });
}

/** Zulip's `access_bot_by_id`: a bot of the organization that the caller owns or administers. */
async function accessBot(tx: Queryable, who: Identity, botId: number): Promise<ProfileUser> {
  const bot = await getProfileUser(tx, who.realmId, botId, { lock: true });
  if (!bot || !bot.isBot || bot.isSystemBot) throw badRequest("No such bot");
  if (who.role > ROLE.administrator && bot.botOwnerId !== who.userId) throw badRequest("Insufficient permission");
  return bot;
}

export interface UpdateBotInput {
  fullName?: string;
  botOwnerId?: number;
  role?: number;
  /** An outgoing webhook bot's service; the contract has checked that the URL is one. */
  servicePayloadUrl?: string;
  serviceInterface?: number;
}

/**
 * PATCH /bots/{bot_id}: name, owner (an active human of the organization), role, and an
 * outgoing webhook bot's service URL and interface (ignored for a bot without a service). All
 * checks run before anything changes. Unlike Zulip, which applies `service_interface` only with
 * `service_payload_url` (and then resets an omitted interface to 1), each changes on its own.
 */
export async function doUpdateBot(
  deps: AccountsDeps,
  who: Identity,
  botId: number,
  p: UpdateBotInput,
): Promise<{ bot: ProfileUser; ownerEmail: string | null; service: BotServiceRow | null }> {
  if (p.role !== undefined && !VALID_ROLES.includes(p.role)) throw badRequest("Invalid role");
  if (p.serviceInterface !== undefined) checkValidInterfaceType(p.serviceInterface);
  return withTx(deps.pool, async (tx) => {
    // As for users: the realm lock first, so a role change and the full-member promotion (which
    // takes it) do not cross, and the lock order matches PATCH /users/{id}.
    if (p.role !== undefined) await lockRealm(tx, who.realmId);
    const bot = await accessBot(tx, who, botId);
    if (p.fullName !== undefined) {
      const name = checkFullName(p.fullName);
      if (name !== bot.fullName) await checkBotNameAvailable(tx, who.realmId, name, bot.id);
      await changeFullNameInTx(tx, deps, bot, name);
    }
    if (p.role !== undefined && p.role !== bot.role) {
      if ((p.role === ROLE.owner || bot.role === ROLE.owner) && who.role !== ROLE.owner) {
        throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
      }
      if (who.role > ROLE.administrator) throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
      await changeRoleInTx(tx, deps, bot, p.role, deps.clock.now());
    }
    if (p.botOwnerId !== undefined && p.botOwnerId !== bot.botOwnerId) {
      const owner = await getProfileUser(tx, who.realmId, p.botOwnerId);
      if (!owner || owner.isSystemBot) throw badRequest("Failed to change owner, no such user");
      if (!owner.isActive) throw badRequest("Failed to change owner, user is deactivated");
      if (owner.isBot) throw badRequest("Failed to change owner, bots can't own other bots");
      await setBotOwner(tx, who.realmId, bot.id, owner.id);
      await notifyBotOwnerChangedInTx(tx, { ...bot, botOwnerId: owner.id }, bot.botOwnerId);
      await notifyRealmUserUpdate(tx, deps, who.realmId, bot.id, { user_id: bot.id, bot_owner_id: owner.id });
    }
    const service =
      p.servicePayloadUrl !== undefined || p.serviceInterface !== undefined
        ? await updateBotServiceInTx(tx, bot, { baseUrl: p.servicePayloadUrl, interface: p.serviceInterface })
        : await getBotService(tx, who.realmId, bot.id);
    const updated = (await getProfileUser(tx, who.realmId, bot.id))!;
    const owner = updated.botOwnerId === null ? null : await getProfileUser(tx, who.realmId, updated.botOwnerId);
    return { bot: updated, ownerEmail: owner?.email ?? null, service };
  });
}

/** DELETE /bots/{bot_id}: deactivates the bot (nothing to do when it already is). */
export async function doDeactivateBot(deps: AccountsDeps, who: Identity, botId: number): Promise<void> {
  await withTx(deps.pool, async (tx) => {
    const bot = await accessBot(tx, who, botId);
    if (bot.isActive) await deactivateBotInTx(tx, deps, bot);
  });
}

/**
 * POST /bots/{bot_id}/api_key/regenerate: the old key stops working at once. Zulip also sends the
 * new key in a realm_bot update; here `realm_bots` has no keys (they are kept only as hashes,
 * and events wait in queues in clear), so nothing there changes and nothing is sent.
 */
export async function doRegenerateBotApiKey(deps: AccountsDeps, who: Identity, botId: number): Promise<string> {
  return withTx(deps.pool, async (tx) => {
    const bot = await accessBot(tx, who, botId);
    await deleteApiKeys(tx, who.realmId, bot.id);
    const apiKey = generateApiKey();
    await insertApiKey(tx, who.realmId, bot.id, hashApiKey(apiKey));
    await emitEvent(tx, { type: "accounts.api_key.reset", realmId: who.realmId, payload: { user_id: bot.id, email: bot.email } });
    return apiKey;
  });
}
