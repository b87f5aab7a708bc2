import { badRequest, JsonText, SUCCESS_PREFIX, type Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { isEmailPublic } from "../lib/avatar";
import { avatarSummary, inaccessibleUserObject, ROLE, userObject, userSummary } from "../lib/format";
import { emailVisibilityOf, ownProfileData, userViewFor } from "./profile";
import { settingOfRealmUsers, settingOfUsers } from "../store/settings";
import { getUser, getUserByDeliveryEmail, getUserByEmail, getUsersByEmails, getUsersByFullNames, getUsersByIds, listRealmUsers, type UserRow } from "../store/users";
import { getRealm } from "../store/realms";
import { messagingOf } from "../lib/messaging-client";
import { canSeeDeliveryEmail, dummyEmail, EMAIL_VISIBILITY } from "../lib/user-settings";
import { userListJson, userListsOf, type LimitedView } from "./user-list";
import { accessibleUserIds, checkCanAccessUser } from "./user-access";

/** A user of the caller's realm (system bots included), or Zulip's "No such user". */
export async function accessUserById(deps: AccountsDeps, realmId: number, userId: number): Promise<UserRow> {
  const user = await getUser(deps.pool, realmId, userId);
  if (!user) throw badRequest("No such user");
  return user;
}

/**
 * Zulip's access_user_by_id for reading (for_admin false): another organization's user is "No
 * such user", and so is a bot unless `allowBots`; a deactivated user is "User is deactivated"
 * unless `allowDeactivated`.
 */
export async function accessUserForRead(
  deps: AccountsDeps,
  realmId: number,
  userId: number,
  opts: { allowBots?: boolean; allowDeactivated?: boolean } = {},
): Promise<UserRow> {
  const user = await accessUserById(deps, realmId, userId);
  if (user.isBot && !opts.allowBots) throw badRequest("No such user");
  if (!user.isActive && !opts.allowDeactivated) throw badRequest("User is deactivated");
  return user;
}

export async function getOwnUser(deps: AccountsDeps, who: Identity) {
  const [u, maxMessageId] = await Promise.all([accessUserById(deps, who.realmId, who.userId), newestMessageId(deps, who)]);
  const obj = userObject(u, { clientGravatar: false });
  return {
    user_id: obj.user_id,
    email: obj.email,
    delivery_email: u.deliveryEmail,
    full_name: obj.full_name,
    is_admin: obj.is_admin,
    is_owner: obj.is_owner,
    is_guest: obj.is_guest,
    is_billing_admin: obj.is_billing_admin,
    role: obj.role,
    is_bot: obj.is_bot,
    is_active: obj.is_active,
    timezone: obj.timezone,
    date_joined: obj.date_joined,
    // Computed with client_gravatar off, so always a URL (Zulip never sends null here).
    avatar_url: obj.avatar_url!,
    avatar_version: obj.avatar_version,
    profile_data: await ownProfileData(deps.pool, who.realmId, who.userId),
    ...(maxMessageId === null ? {} : { max_message_id: maxMessageId }),
  };
}

/**
 * `max_message_id` of GET /users/me (deprecated in Zulip, still sent): asked of messaging. The
 * rest of the answer does not depend on messaging, so without it the field is left out rather
 * than the request failing.
 */
async function newestMessageId(deps: AccountsDeps, who: Identity): Promise<number | null> {
  try {
    return await messagingOf(deps).maxMessageId(who);
  } catch (err) {
    deps.log.warn({ err: (err as Error).message }, "max_message_id unavailable: messaging did not answer");
    return null;
  }
}

/**
 * GET /users: every user of the organization, active or not (system bots aside), as JSON; for a
 * guest the organization limits, the users they do not access as "Unknown user" stand-ins.
 */
export async function getRealmMembers(deps: AccountsDeps, who: Identity, clientGravatar: boolean, withProfile: boolean): Promise<JsonText> {
  const viewer = { id: who.userId, role: who.role };
  const [list, limited] = await Promise.all([userListsOf(deps).get(deps.pool, who.realmId, { clientGravatar, profileData: withProfile }), limitedView(deps, who, withProfile)]);
  return new JsonText(`${SUCCESS_PREFIX},"members":${userListJson(list, viewer, null, limited)}}`);
}

/** A guest's view of the user list where the organization limits guests (Zulip gives stand-ins to GET /users). */
async function limitedView(deps: AccountsDeps, who: Identity, withProfile: boolean): Promise<LimitedView | undefined> {
  if (who.role !== ROLE.guest) return undefined;
  const realm = await getRealm(deps.pool, who.realmId);
  const accessible = realm && (await accessibleUserIds(deps, realm, { id: who.userId, role: who.role }));
  if (!realm || !accessible) return undefined;
  const profile = withProfile ? { profile_data: {} } : {};
  return { accessible, standIn: (id) => JSON.stringify({ ...inaccessibleUserObject(id, realm.stringId), ...profile }) };
}

export async function getMember(deps: AccountsDeps, who: Identity, userId: number, clientGravatar: boolean, withProfile: boolean) {
  return present(deps, who, await accessUserById(deps, who.realmId, userId), clientGravatar, withProfile);
}

/**
 * One user as the caller sees them. A guest the organization limits gets Zulip's "Insufficient
 * permission" for a user they do not access (access_user_common's check_can_access_user).
 */
async function present(deps: AccountsDeps, who: Identity, u: UserRow, clientGravatar: boolean, withProfile: boolean) {
  await checkCanAccessUser(deps, who, u, "Insufficient permission");
  const [view, visibility] = await Promise.all([
    userViewFor(deps.pool, who.realmId, { id: who.userId, role: who.role }, { profileData: withProfile }),
    emailVisibilityOf(deps.pool, who.realmId, u.id),
  ]);
  // As in the list: null only where the client can compute the Gravatar from the API email.
  return view(u, userObject(u, { clientGravatar, emailPublic: isEmailPublic(visibility) }));
}

/**
 * GET /users/{email}: the Zulip API email first (a `user{id}@<realm>.invalid` dummy address
 * finds that user whatever their email visibility), then the real address, found only where
 * its owner's email visibility lets the caller see it. Anything else is "No such user", so a
 * lookup cannot tell a hidden address from an unknown one.
 */
export async function getMemberByEmail(deps: AccountsDeps, who: Identity, email: string, clientGravatar: boolean, withProfile: boolean) {
  const dummyId = /^user(\d+)@/i.exec(email)?.[1];
  if (dummyId !== undefined) {
    const realm = await getRealm(deps.pool, who.realmId);
    if (realm && email.toLowerCase() === dummyEmail(Number(dummyId), realm.stringId).toLowerCase()) {
      return getMember(deps, who, Number(dummyId), clientGravatar, withProfile);
    }
  }
  let u = await getUserByEmail(deps.pool, who.realmId, email);
  if (!u) {
    const real = await getUserByDeliveryEmail(deps.pool, who.realmId, email);
    if (real && canSeeDeliveryEmail({ id: who.userId, role: who.role }, real.id, await emailVisibilityOf(deps.pool, who.realmId, real.id))) u = real;
  }
  if (!u) throw badRequest("No such user");
  return present(deps, who, u, clientGravatar, withProfile);
}

/**
 * Service-to-service lookup by ids or emails, any status; unknown ones are simply absent. With
 * neither, the whole realm as GET /users lists it (replicas fill themselves at once).
 */
export async function getInternalUsers(deps: AccountsDeps, realmId: number, ids?: number[], emails?: string[], fullNames?: string[]) {
  if (ids === undefined && emails === undefined && fullNames === undefined) {
    const [all, visibility] = await Promise.all([listRealmUsers(deps.pool, realmId), settingOfRealmUsers(deps.pool, realmId, "email_address_visibility")]);
    return all.map((u) => internalUser(u, visibility));
  }
  const rows: UserRow[] = [];
  if (ids?.length) rows.push(...(await getUsersByIds(deps.pool, realmId, ids)));
  if (emails?.length) rows.push(...(await getUsersByEmails(deps.pool, realmId, emails)));
  if (fullNames?.length) rows.push(...(await getUsersByFullNames(deps.pool, realmId, fullNames)));
  const seen = new Set<number>();
  const unique = rows.filter((u) => !seen.has(u.id) && seen.add(u.id));
  const visibility = await settingOfUsers(deps.pool, realmId, unique.map((u) => u.id), "email_address_visibility");
  return unique.map((u) => internalUser(u, visibility));
}

/** A user's summary with what their avatar URL is built from (users without the setting stored have the default). */
function internalUser(u: UserRow, visibility: Map<number, unknown>) {
  const shown = (visibility.get(u.id) as number | undefined) ?? EMAIL_VISIBILITY.everyone;
  return { ...userSummary(u), avatar: avatarSummary(u, shown) };
}
