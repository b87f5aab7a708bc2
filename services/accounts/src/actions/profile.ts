import type { RealmUserUpdatePersonEvent, UserAvatarSummary, UserSummary } from "@chat/contracts";
import { ApiError, badRequest, emitEvent, organizationUrl, queueMail, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { avatarUrl, MAX_AVATAR_BYTES, sniffImageType } from "../lib/avatar";
import { randomToken } from "../lib/credentials";
import { avatarSummary, ROLE, userSummary, VALID_ROLES } from "../lib/format";
import { deactivationMail } from "../lib/mails";
import { emailVisibilityOf } from "../queries/profile";
import { checkFullName, fullNameKey } from "../lib/validate";
import { getRealm, lockRealm, type RealmRow } from "../store/realms";
import { deleteAllTokens } from "../store/push-tokens";
import { activeBotsOwnedBy, activeUserHasFullName, activeUserIds, countActiveOwners, realmFullNames, setUserActive, type UserRow } from "../store/users";
import {
  deleteAvatarImage,
  getProfileUser,
  setAvatar,
  setBillingAdmin,
  setBotOwner,
  setFullName,
  setRole,
  upsertAvatarImage,
  type ProfileUser,
} from "../store/profile";
import { revokeInvitesGeneratedByUserInTx } from "./invites-changed";
import { moveSystemGroupsInTx } from "./system-groups";
import { applyProfileDataInTx } from "./custom-profile-fields";
import { notifyAdministeredBotsInTx, notifyBotOwnerChangedInTx, notifyBotUpdateInTx } from "./realm-bots";
import { audienceWithAccess } from "../queries/user-access";
import { notifyRoleAccessChangedInTx } from "./user-access";

type Person = RealmUserUpdatePersonEvent["person"];

/**
 * What accounts' user events carry for the services' replicas: the user's summary, and beside it
 * what their avatar URL is built from (messaging's message senders).
 */
export async function replicaPayload(tx: Queryable, user: UserRow): Promise<{ user: UserSummary; avatar: UserAvatarSummary }> {
  return { user: userSummary(user), avatar: avatarSummary(user, await emailVisibilityOf(tx, user.realmId, user.id)) };
}

/**
 * Emits one `realm_user` / update: the client event (`person` form) to every user who can access
 * the changed user (everyone active in the organization, or `users`, but for the guests an
 * organization that limits them keeps from the user), inside `accounts.user.updated` with the
 * user's new summary for the services' replicas.
 */
export async function notifyRealmUserUpdate(tx: Queryable, deps: AccountsDeps, realmId: number, userId: number, person: Person, users?: number[]): Promise<void> {
  const user = await getProfileUser(tx, realmId, userId);
  if (!user) return;
  const audience = await audienceWithAccess(tx, deps, realmId, user, users ?? (await activeUserIds(tx, realmId)));
  await emitEvent(tx, {
    type: "accounts.user.updated",
    realmId,
    payload: {
      ...(await replicaPayload(tx, user)),
      ...(audience.length ? { client: { event: { type: "realm_user", op: "update", person }, users: audience } } : {}),
    },
  });
}

/**
 * The user an administrator acts on (Zulip's `access_user_by_id`): another organization's or a
 * system bot answers "No such user"; bots only where allowed; deactivated users only where
 * allowed; then the caller must be an administrator ("Insufficient permission").
 */
async function accessUserForAdmin(
  tx: Queryable,
  who: Identity,
  userId: number,
  opts: { allowBots: boolean; allowDeactivated: boolean },
): Promise<ProfileUser> {
  const user = await getProfileUser(tx, who.realmId, userId, { lock: true });
  if (!user || user.isSystemBot || (user.isBot && !opts.allowBots)) throw badRequest("No such user");
  if (!user.isActive && !opts.allowDeactivated) throw badRequest("User is deactivated");
  if (who.role > ROLE.administrator) throw badRequest("Insufficient permission");
  return user;
}

async function accessSelf(tx: Queryable, who: Identity): Promise<ProfileUser> {
  const user = await getProfileUser(tx, who.realmId, who.userId, { lock: true });
  if (!user) throw badRequest("No such user");
  return user;
}

export const requireAdmin = (who: Identity) => {
  if (who.role > ROLE.administrator) throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
};
export const requireOwner = (who: Identity) => {
  if (who.role !== ROLE.owner) throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
};

/**
 * In an organization that requires unique names, no other user may have the name, compared
 * without case and Unicode form (Zulip's check_full_name).
 */
export async function checkUniqueFullNameInTx(tx: Queryable, realm: Pick<RealmRow, "id" | "requireUniqueNames">, name: string, exceptUserId: number | null): Promise<void> {
  if (!realm.requireUniqueNames) return;
  const key = fullNameKey(name);
  if ((await realmFullNames(tx, realm.id, exceptUserId)).some((other) => fullNameKey(other) === key)) {
    throw badRequest("Unique names required in this organization.");
  }
}

export async function changeFullNameInTx(tx: Queryable, deps: AccountsDeps, user: ProfileUser, rawName: string): Promise<void> {
  const name = checkFullName(rawName);
  if (name === user.fullName) return;
  const realm = await getRealm(tx, user.realmId);
  if (realm) await checkUniqueFullNameInTx(tx, realm, name, user.id);
  await setFullName(tx, user.realmId, user.id, name);
  await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, full_name: name });
  await notifyBotUpdateInTx(tx, user, { full_name: name });
}

/**
 * Changes a role, in Zulip's order: `realm_user` update with `role`, then the move between the
 * system groups (user_group events: membership is client state too, deactivated users' included);
 * then the bots the user now administers or no longer does; last, in an organization that limits
 * guests, the users a new or former guest no longer or now accesses.
 */
export async function changeRoleInTx(tx: Queryable, deps: AccountsDeps, user: ProfileUser, role: number, now: Date): Promise<void> {
  if (role === user.role) return;
  await setRole(tx, user.realmId, user.id, role);
  await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, role });
  const realm = await getRealm(tx, user.realmId);
  if (realm) await moveSystemGroupsInTx(tx, realm, user.id, user.role, role, now);
  await notifyAdministeredBotsInTx(tx, user, user.role, role);
  if (realm) await notifyRoleAccessChangedInTx(tx, deps, realm, user, user.role, role);
}

export interface UpdateUserInput {
  fullName?: string;
  role?: number;
  profileData?: Array<{ id: number; value: string | number[] | null }>;
}

/**
 * PATCH /users/{user_id} by an administrator. Role rules as Zulip: only owners grant or remove
 * the owner role, and the last owner keeps it. All checks run before any change is written.
 */
export async function doUpdateUserByAdmin(deps: AccountsDeps, who: Identity, userId: number, p: UpdateUserInput): Promise<void> {
  requireAdmin(who);
  if (p.role !== undefined && !VALID_ROLES.includes(p.role)) throw badRequest("Invalid role");
  if (p.fullName !== undefined) checkFullName(p.fullName);
  await withTx(deps.pool, async (tx) => {
    // The realm lock makes the last-owner check safe against a concurrent change.
    if (p.role !== undefined) await lockRealm(tx, who.realmId);
    const user = await accessUserForAdmin(tx, who, userId, { allowBots: true, allowDeactivated: true });
    if (p.role !== undefined && p.role !== user.role) {
      if ((p.role === ROLE.owner || user.role === ROLE.owner) && who.role !== ROLE.owner) {
        throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
      }
      if (user.role === ROLE.owner && user.isActive && !user.isBot && (await countActiveOwners(tx, who.realmId)) <= 1) {
        throw badRequest("The owner permission cannot be removed from the only organization owner.");
      }
    }
    if (p.fullName !== undefined) await changeFullNameInTx(tx, deps, user, p.fullName);
    if (p.role !== undefined) await changeRoleInTx(tx, deps, user, p.role, deps.clock.now());
    if (p.profileData !== undefined) {
      if (user.isBot) throw badRequest("Bots cannot have custom profile fields");
      await applyProfileDataInTx(tx, deps, user, p.profileData);
    }
  });
}

/**
 * The billing role, set by an operator (internal route, admin CLI): any human user of the
 * organization, active or not; the same value again changes nothing and notifies no one.
 */
export async function doSetBillingAdmin(deps: AccountsDeps, realmId: number, userId: number, value: boolean): Promise<void> {
  await withTx(deps.pool, async (tx) => {
    const user = await getProfileUser(tx, realmId, userId, { lock: true });
    if (!user || user.isBot) throw badRequest("No such user");
    if (user.isBillingAdmin === value) return;
    await setBillingAdmin(tx, realmId, user.id, value);
    await notifyRealmUserUpdate(tx, deps, realmId, user.id, { user_id: user.id, is_billing_admin: value });
  });
}

/**
 * Marks a user inactive and tells replicas, auth caches and clients (realm_user update). They stay
 * in their groups' member lists, as in Zulip before feature level 303. Their push tokens go: a
 * deactivated account must not receive notifications on its devices; their pending invitations
 * are revoked. Callers handle bots.
 */
export async function deactivateInTx(tx: Queryable, deps: AccountsDeps, user: UserRow): Promise<void> {
  const updated = await setUserActive(tx, user.realmId, user.id, false);
  await deleteAllTokens(tx, user.realmId, user.id);
  // Only those who can access the user hear of it (feature level 303).
  const audience = await audienceWithAccess(tx, deps, user.realmId, user, await activeUserIds(tx, user.realmId));
  await emitEvent(tx, {
    type: "accounts.user.deactivated",
    realmId: user.realmId,
    payload: {
      ...(await replicaPayload(tx, updated)),
      client: { event: { type: "realm_user", op: "update", person: { user_id: user.id, is_active: false } }, users: audience },
    },
  });
  await notifyBotUpdateInTx(tx, updated, { is_active: false });
  await revokeInvitesGeneratedByUserInTx(tx, user);
}

/** DELETE /users/{user_id}: administrators deactivate a user; never the last owner. */
/**
 * DELETE /users/{user_id}. With `notificationComment` (even an empty one, as Zulip's
 * deactivation_notification_comment) the user is mailed that the account was deactivated, by
 * whom, with the comment.
 */
export async function doDeactivateUserByAdmin(deps: AccountsDeps, who: Identity, userId: number, notificationComment?: string): Promise<void> {
  // Zulip's view is for administrators only (require_realm_admin), before it looks at the user.
  requireAdmin(who);
  await withTx(deps.pool, async (tx) => {
    await lockRealm(tx, who.realmId);
    const user = await accessUserForAdmin(tx, who, userId, { allowBots: false, allowDeactivated: false });
    if (user.role === ROLE.owner && who.role !== ROLE.owner) throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    if (user.role === ROLE.owner && (await countActiveOwners(tx, who.realmId)) <= 1) {
      throw badRequest("Cannot deactivate the only organization owner");
    }
    await deactivateInTx(tx, deps, user);
    for (const bot of await activeBotsOwnedBy(tx, who.realmId, user.id)) {
      const b = await getProfileUser(tx, who.realmId, bot.id);
      if (b) await deactivateInTx(tx, deps, b);
    }
    if (notificationComment !== undefined) {
      const [realm, admin] = await Promise.all([getRealm(tx, who.realmId), getProfileUser(tx, who.realmId, who.userId)]);
      await queueMail(
        tx,
        deactivationMail({
          to: user.deliveryEmail,
          realmName: realm!.name,
          realmUrl: organizationUrl(deps.config, realm!.stringId),
          adminName: admin?.fullName ?? "An administrator",
          comment: notificationComment.trim(),
        }),
      );
    }
  });
}

/** Deactivates a bot (by its owner or an administrator). */
export async function deactivateBotInTx(tx: Queryable, deps: AccountsDeps, bot: ProfileUser): Promise<void> {
  await deactivateInTx(tx, deps, bot);
}

/**
 * POST /users/{user_id}/reactivate (administrators; bots included, as Zulip allows). Only that
 * account comes back: a person's bots stay deactivated. As in Zulip, a bot is refused while an
 * active account has its name, and a bot whose owner is deactivated becomes the reactivating
 * administrator's (the owner-change events follow the reactivation's).
 */
export async function doReactivateUser(deps: AccountsDeps, who: Identity, userId: number): Promise<void> {
  requireAdmin(who);
  await withTx(deps.pool, async (tx) => {
    const user = await accessUserForAdmin(tx, who, userId, { allowBots: true, allowDeactivated: true });
    if (user.isActive) throw badRequest("User is already active");
    let previousOwnerId: number | null = null;
    if (user.isBot) {
      if (await activeUserHasFullName(tx, user.realmId, user.fullName, user.id)) {
        throw badRequest(
          `There is already an active bot named "${user.fullName}" in this organization. To reactivate this bot, you must rename or deactivate the other one.`,
        );
      }
      const owner = user.botOwnerId === null ? null : await getProfileUser(tx, who.realmId, user.botOwnerId);
      if (owner && !owner.isActive) {
        // Bots never own bots: an administrator that is a bot cannot take it over.
        if (who.isBot) throw badRequest("Cannot reactivate a bot whose owner is deactivated.");
        previousOwnerId = owner.id;
        await setBotOwner(tx, user.realmId, user.id, who.userId);
      }
    }
    const bot = previousOwnerId === null ? user : { ...user, botOwnerId: who.userId };
    await setUserActive(tx, user.realmId, user.id, true);
    await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, is_active: true });
    await notifyBotUpdateInTx(tx, bot, { is_active: true });
    if (previousOwnerId !== null) {
      await notifyBotOwnerChangedInTx(tx, bot, previousOwnerId);
      // Zulip sends only the realm_bot events here; the owner in everyone's realm_users changes too.
      await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, bot_owner_id: who.userId });
    }
  });
}

/**
 * The avatar fields of a `realm_user` update (full URLs: clients apply client_gravatar
 * themselves); for a bot, first its realm_bot update, in Zulip's order.
 */
export async function notifyAvatar(tx: Queryable, deps: AccountsDeps, realmId: number, userId: number): Promise<string> {
  const u = await getProfileUser(tx, realmId, userId);
  if (!u) throw badRequest("No such user");
  const url = avatarUrl(u, { clientGravatar: false })!;
  await notifyBotUpdateInTx(tx, u, { avatar_url: url });
  await notifyRealmUserUpdate(tx, deps, realmId, userId, {
    user_id: userId,
    avatar_url: url,
    avatar_source: u.avatarSource,
    avatar_url_medium: avatarUrl(u, { clientGravatar: false, medium: true })!,
    avatar_version: u.avatarVersion,
  });
  return url;
}

/** With avatar changes disabled in the organization only administrators change their own (Zulip's). */
async function checkAvatarChangesAllowed(deps: AccountsDeps, who: Identity): Promise<void> {
  if (who.role <= ROLE.administrator) return;
  if ((await getRealm(deps.pool, who.realmId))?.avatarChangesDisabled) throw badRequest("Avatar changes are disabled in this organization.");
}

/** POST /users/me/avatar: one image file replaces the avatar; the version bumps. */
export async function doUploadOwnAvatar(deps: AccountsDeps, who: Identity, files: Array<{ data: Buffer; truncated: boolean }>): Promise<string> {
  if (files.length !== 1) throw badRequest("You must upload exactly one avatar.");
  await checkAvatarChangesAllowed(deps, who);
  const [file] = files;
  if (file.truncated || file.data.length > MAX_AVATAR_BYTES) {
    throw badRequest(`Uploaded file is larger than the allowed limit of ${MAX_AVATAR_BYTES / (1024 * 1024)} MiB`);
  }
  const type = sniffImageType(file.data);
  if (!type) throw new ApiError("BAD_REQUEST", "Could not decode image; did you upload an image file?");
  return withTx(deps.pool, async (tx) => {
    const user = await accessSelf(tx, who);
    const token = randomToken(18).replace(/[^A-Za-z0-9]/g, "x");
    await upsertAvatarImage(tx, user.realmId, user.id, token, type, file.data);
    await setAvatar(tx, user.realmId, user.id, "U", token);
    return notifyAvatar(tx, deps, user.realmId, user.id);
  });
}

/** DELETE /users/me/avatar: back to Gravatar; the version bumps so caches refresh. */
export async function doDeleteOwnAvatar(deps: AccountsDeps, who: Identity): Promise<string> {
  await checkAvatarChangesAllowed(deps, who);
  return withTx(deps.pool, async (tx) => {
    const user = await accessSelf(tx, who);
    await deleteAvatarImage(tx, user.realmId, user.id);
    await setAvatar(tx, user.realmId, user.id, "G", null);
    return notifyAvatar(tx, deps, user.realmId, user.id);
  });
}
