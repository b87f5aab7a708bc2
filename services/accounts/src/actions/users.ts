import { ApiError, badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { applyRealmDefaultsToNewUser } from "./settings";
import { generateApiKey, hashApiKey, hashPassword, longEnoughPassword } from "../lib/credentials";
import { avatarSummary, inaccessibleUserObject, ROLE, userObject, userSummary, VALID_ROLES } from "../lib/format";
import { checkFullName, isValidEmail } from "../lib/validate";
import { CREATE_USER_REFUSALS, type EmailRefusals } from "../lib/email-validation";
import { checkEmailAllowedForRealm } from "../queries/realm-domains";
import { deleteApiKeys, insertApiKey } from "../store/api-keys";
import { deleteAllTokens } from "../store/push-tokens";
import { selectCanCreateUsers, setCanCreateUsers } from "../store/profile";
import { getRealm, lockRealm } from "../store/realms";
import { addToSystemGroupsInTx } from "./system-groups";
import { checkUniqueFullNameInTx, deactivateInTx } from "./profile";
import { notifyBotCreatedInTx } from "./realm-bots";
import { revokeInvitesToNewAccountInTx } from "./invites-changed";
import {
  activeBotsOwnedBy,
  activeUserIds,
  countActiveUsers,
  countActiveOwners,
  getUser,
  getUserByEmail,
  getUsersByAddresses,
  insertUser,
  listRealmUsers,
  lockUser,
  setUserActive,
  type UserRow,
} from "../store/users";
import { emailVisibilityOf } from "../queries/profile";
import { getUserSettingsRow } from "../store/settings";
import { canSeeDeliveryEmail } from "../lib/user-settings";
import { messagingOf } from "../lib/messaging-client";
import { limitsGuests } from "../queries/user-access";

export interface CreateUserInput {
  realmId: number;
  email: string;
  fullName: string;
  role: number;
  password?: string | null;
  /** Refuse a password shorter than Zulip's minimum (POST /users; operators' tools may set any). */
  checkPasswordStrength?: boolean;
  botType?: number | null;
  botOwnerId?: number | null;
  isSystemBot?: boolean;
  timezone?: string;
  /**
   * Check the address against the organization's email rules (its domains, disposable
   * addresses), refusing with these texts: what each way in for people words it. Bots are not
   * checked (their addresses are the server's).
   */
  emailRefusals?: EmailRefusals;
}

/** Bot types: 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded. */
const BOT_TYPES = [1, 2, 3, 4];

/**
 * Creates a user inside the caller's transaction: row, API key, system group membership, and the
 * `accounts.user.created` event carrying the realm_user/add client event. Returns the key once.
 */
export async function createUserInTx(tx: Queryable, deps: AccountsDeps, input: CreateUserInput): Promise<{ user: UserRow; apiKey: string }> {
  const email = input.email.trim();
  if (!isValidEmail(email)) throw badRequest(`Invalid email '${email}'`);
  const fullName = checkFullName(input.fullName);
  if (!VALID_ROLES.includes(input.role)) throw badRequest("Invalid role");
  const isBot = input.botType !== undefined && input.botType !== null;
  if (isBot && !BOT_TYPES.includes(input.botType!)) throw badRequest("Invalid bot_type");
  if (isBot && !input.isSystemBot) {
    const owner = input.botOwnerId ? await getUser(tx, input.realmId, input.botOwnerId) : null;
    if (!owner || !owner.isActive) throw badRequest("Invalid bot owner");
  }
  const realm = await getRealm(tx, input.realmId);
  if (!realm) throw badRequest("Invalid organization");
  await checkUniqueFullNameInTx(tx, realm, fullName, null);
  if (input.emailRefusals && !isBot) await checkEmailAllowedForRealm(tx, realm, email, input.emailRefusals);
  // Taken as an API email or as a real address (a hidden one's account has a stand-in API email).
  if ((await getUsersByAddresses(tx, input.realmId, [email])).length) throw badRequest(`Email '${email}' already in use`);
  if (input.checkPasswordStrength && !longEnoughPassword(input.password ?? "")) throw badRequest("The password is too weak.");

  const passwordHash = input.password ? await hashPassword(input.password, deps.config.PASSWORD_SCRYPT_COST) : null;
  let user: UserRow;
  try {
    user = await insertUser(tx, {
      realmId: input.realmId,
      email,
      fullName,
      role: input.role,
      isBot,
      botType: isBot ? input.botType! : null,
      botOwnerId: isBot ? (input.botOwnerId ?? null) : null,
      isSystemBot: input.isSystemBot,
      passwordHash,
      timezone: input.timezone,
      dateJoined: deps.clock.now(),
    });
  } catch (err) {
    if ((err as { code?: string }).code === "23505") throw badRequest(`Email '${email}' already in use`);
    throw err;
  }
  // Settings start as the organization's defaults for new users (issue 10).
  user = await applyRealmDefaultsToNewUser(tx, user);
  const apiKey = generateApiKey();
  await insertApiKey(tx, user.realmId, user.id, hashApiKey(apiKey));
  // Everyone active learns of the user; the delivery email only those its visibility allows
  // (the organization's default for new users may hide it), the rest get null, as in Zulip.
  const everyone = input.isSystemBot ? [] : (await listRealmUsers(tx, user.realmId)).filter((u) => u.isActive);
  // A new human shares nothing with anyone yet: guests an organization limits do not access them.
  const hidden = !user.isBot && limitsGuests(realm) ? everyone.filter((u) => u.role === ROLE.guest && u.id !== user.id).map((u) => u.id) : [];
  const viewers = everyone.filter((u) => !hidden.includes(u.id));
  const policy = await emailVisibilityOf(tx, user.realmId, user.id);
  const person = { ...userObject(user, { clientGravatar: false }), ...(user.isBot ? {} : { profile_data: {} }) };
  const seeing = viewers.filter((v) => canSeeDeliveryEmail(v, user.id, policy)).map((v) => v.id);
  const notSeeing = viewers.filter((v) => !canSeeDeliveryEmail(v, user.id, policy)).map((v) => v.id);
  await emitEvent(tx, {
    type: "accounts.user.created",
    realmId: user.realmId,
    payload: {
      user: userSummary(user),
      avatar: avatarSummary(user, policy),
      // The defaults just applied: the services' settings replicas learn of no other way.
      settings: await getUserSettingsRow(tx, user.realmId, user.id),
      // Humans carry their (empty) custom profile data, as register's realm_users do.
      ...(seeing.length ? { client: { event: { type: "realm_user", op: "add", person }, users: seeing } } : {}),
    },
  });
  if (notSeeing.length) {
    await emitEvent(tx, {
      type: "accounts.user.announced",
      realmId: user.realmId,
      payload: {
        user_id: user.id,
        client: { event: { type: "realm_user", op: "add", person: { ...person, delivery_email: null } }, users: notSeeing },
      },
    });
  }
  if (hidden.length) {
    // Zulip's "Unknown user" stand-in, but not to clients that can do without it (user_list_incomplete).
    const standIn = { ...inaccessibleUserObject(user.id, realm.stringId), profile_data: {} };
    await emitEvent(tx, {
      type: "accounts.user.announced",
      realmId: user.realmId,
      payload: {
        user_id: user.id,
        client: { event: { type: "realm_user", op: "add", person: standIn }, users: hidden, without_capability: "user_list_incomplete" },
      },
    });
  }
  // After realm_user/add, so clients know the user before seeing them join a group.
  if (!input.isSystemBot) await addToSystemGroupsInTx(tx, realm, user, deps.clock.now());
  return { user, apiKey };
}

/** Admin CLI and tests: create any user or bot. */
export async function doCreateUser(deps: AccountsDeps, input: CreateUserInput) {
  return withTx(deps.pool, async (tx) => {
    const created = await createUserInTx(tx, deps, input);
    await revokeInvitesToNewAccountInTx(tx, created.user);
    await notifyJoinedWithoutInviteInTx(tx, created.user);
    if (created.user.isBot && !created.user.isSystemBot) await notifyBotCreatedInTx(tx, created.user);
    return created;
  });
}

/**
 * A human created without an invitation joins the default channels (Zulip's do_create_user with
 * no prereg_user), done by this service's consumer of `accounts.user.joined`; bots join none.
 */
async function notifyJoinedWithoutInviteInTx(tx: Queryable, user: UserRow): Promise<void> {
  if (user.isBot) return;
  await emitEvent(tx, { type: "accounts.user.joined", realmId: user.realmId, payload: { user_id: user.id } });
}

/** Consumer side of `accounts.user.joined`: the default channels, if the user is still active (idempotent). */
export async function doSubscribeJoinedUser(deps: AccountsDeps, realmId: number, userId: number): Promise<void> {
  const user = await getUser(deps.pool, realmId, userId);
  if (!user || !user.isActive || user.isBot) return;
  await messagingOf(deps).subscribeNewUser(realmId, user.id, [], true);
}

/**
 * POST /users: an administrator the operator allowed to (Zulip's can_create_users, set with
 * `chat user can-create-users`) creates a member with a password. The address must be one the
 * organization lets in (Zulip's create_user_backend checks it, invitation or not).
 */
export async function doCreateUserByAdmin(deps: AccountsDeps, who: Identity, p: { email: string; password: string; fullName: string }) {
  if (who.role > ROLE.administrator || !(await selectCanCreateUsers(deps.pool, who.realmId, who.userId))) {
    throw badRequest("User not authorized to create users");
  }
  return withTx(deps.pool, async (tx) => {
    const { user } = await createUserInTx(tx, deps, {
      realmId: who.realmId,
      email: p.email,
      fullName: p.fullName,
      role: ROLE.member,
      password: p.password,
      checkPasswordStrength: true,
      emailRefusals: CREATE_USER_REFUSALS,
    });
    await revokeInvitesToNewAccountInTx(tx, user);
    await notifyJoinedWithoutInviteInTx(tx, user);
    return user;
  });
}

/**
 * Operator CLI: allows (or no longer allows) a user to create accounts through POST /users, as
 * Zulip's `change_user_role ... can_create_users`. Not visible to clients, so no event.
 */
export async function doSetCanCreateUsers(deps: AccountsDeps, realmId: number, userId: number, value: boolean): Promise<void> {
  const user = await getUser(deps.pool, realmId, userId);
  if (!user) throw badRequest("No such user");
  await setCanCreateUsers(deps.pool, realmId, userId, value);
}

/** Replaces every API key of a user with one new key; the old ones stop working at once. */
export async function doResetApiKey(deps: AccountsDeps, realmId: number, email: string) {
  return withTx(deps.pool, async (tx) => {
    const user = await getUserByEmail(tx, realmId, email.trim());
    if (!user) throw badRequest("No such user");
    await deleteApiKeys(tx, realmId, user.id);
    const apiKey = generateApiKey();
    await insertApiKey(tx, realmId, user.id, hashApiKey(apiKey));
    await emitEvent(tx, { type: "accounts.api_key.reset", realmId, payload: { user_id: user.id, email: user.email } });
    return { user, apiKey };
  });
}

/**
 * POST /users/me/api_key/regenerate: as Zulip's do_regenerate_api_key, one new key replaces all
 * of the account's keys (logins' included, so the next password login issues another), and the
 * account's push registrations go: the devices were signed in with a key that no longer works.
 */
export async function doRegenerateOwnApiKey(deps: AccountsDeps, who: Identity): Promise<string> {
  return withTx(deps.pool, async (tx) => {
    const user = await lockUser(tx, who.realmId, who.userId);
    if (!user || !user.isActive) throw badRequest("Account is deactivated");
    await deleteApiKeys(tx, who.realmId, user.id);
    const apiKey = generateApiKey();
    await insertApiKey(tx, who.realmId, user.id, hashApiKey(apiKey));
    await deleteAllTokens(tx, who.realmId, user.id);
    // Gateways drop their cached checks of the old key on this event.
    await emitEvent(tx, { type: "accounts.api_key.reset", realmId: who.realmId, payload: { user_id: user.id, email: user.email } });
    return apiKey;
  });
}

/** DELETE /users/me: refused for the only owner or the only user; the user's bots go with them. */
export async function doDeactivateOwnUser(deps: AccountsDeps, who: Identity): Promise<void> {
  await withTx(deps.pool, async (tx) => {
    // The realm lock serializes concurrent deactivations, so two owners cannot both leave.
    await lockRealm(tx, who.realmId);
    const user = await lockUser(tx, who.realmId, who.userId);
    if (!user || !user.isActive) throw badRequest("Account is deactivated");
    // Zulip counts every active account of the organization here, bots included.
    if (!user.isBot && (await countActiveUsers(tx, who.realmId)) === 1) {
      throw new ApiError("CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only user.", {
        extra: { is_last_owner: false, entity: "user" },
      });
    }
    if (user.role === ROLE.owner && !user.isBot && (await countActiveOwners(tx, who.realmId)) === 1) {
      throw new ApiError("CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only organization owner.", {
        extra: { is_last_owner: true, entity: "organization owner" },
      });
    }
    await deactivateInTx(tx, deps, user);
    for (const bot of await activeBotsOwnedBy(tx, who.realmId, user.id)) await deactivateInTx(tx, deps, bot);
  });
}
