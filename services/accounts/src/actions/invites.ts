import { ApiError, badRequest, emitEvent, organizationUrl, queueMail, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { hashApiKey, randomToken } from "../lib/credentials";
import { ROLE, VALID_ROLES } from "../lib/format";
import { messagingOf } from "../lib/messaging-client";
import { invitationMail } from "../lib/mails";
import { POLICY, policyAllows } from "../lib/policy";
import { INVITE_REFUSALS, SIGNUP_REFUSALS } from "../lib/email-validation";
import { isValidEmail, MAX_DATE_MS } from "../lib/validate";
import { getRealmEmailValidator } from "../queries/realm-domains";
import { checkGroupsApiCaller } from "../queries/user-groups";
import {
  countInvitesSince,
  deleteExpiredInvites,
  getPendingInvite,
  getUsableInviteByKeyHash,
  insertInvite,
  INVITE_STATUS,
  lockPendingInvite,
  lockUsableInviteByKeyHash,
  lockUsableInviteForEmail,
  type InviteRow,
  markInviteResent,
  revokeOtherInvitesForEmail,
  setInviteStatus,
} from "../store/invites";
import { getRealm, type RealmRow } from "../store/realms";
import { getUser, getUsersByAddresses, type UserRow } from "../store/users";
import { notifyInvitesChanged } from "./invites-changed";
import { createUserInTx } from "./users";

/** The invitation's mail, sent once the invitation is committed; its link is `/accounts/do_confirm/{key}`. */
async function queueInvitationMail(tx: Queryable, deps: AccountsDeps, realm: RealmRow, referrer: UserRow, to: string, key: string, expiresAt: Date | null): Promise<void> {
  const realmUrl = organizationUrl(deps.config, realm.stringId);
  await queueMail(
    tx,
    invitationMail({
      to,
      referrerName: referrer.fullName,
      referrerEmail: referrer.deliveryEmail,
      realmName: realm.name,
      realmUrl,
      link: `${realmUrl}/accounts/do_confirm/${key}`,
      expiresAt,
      now: deps.clock.now(),
    }),
  );
}

export function invitationFailed(msg: string, errors: Array<[string, string, boolean]>, extra: { sent: boolean; daily?: boolean }) {
  return new ApiError("INVITATION_FAILED", msg, {
    extra: { errors, sent_invitations: extra.sent, license_limit_reached: false, daily_limit_reached: extra.daily ?? false },
  });
}

export function parseInviteeEmails(raw: string): string[] {
  // "Jane Doe <jane@example.org>" is the address between the angle brackets, as in Zulip.
  return [...new Set(raw.split(/[,\n]/).map((e) => (/<(.*)>/.exec(e)?.[1] ?? e).trim()).filter(Boolean))];
}

export interface SendInvitesInput {
  inviteeEmails: string;
  expiresInMinutes: number | null | undefined;
  inviteAs: number;
  streamIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  notifyReferrerOnJoin: boolean;
}

/**
 * Who may invite, and to which role (spec 4.6 and section 5). Checked before anything about the
 * request's addresses or channels, as Zulip's view does.
 */
function checkInviter(deps: AccountsDeps, who: Identity, me: UserRow, realm: RealmRow, inviteAs: number): void {
  checkGroupsApiCaller(who);
  if (realm.inviteToRealmPolicy === POLICY.nobody || !policyAllows(realm.inviteToRealmPolicy, me, realm, deps.clock.now())) {
    throw badRequest("Insufficient permission");
  }
  checkInviteRole(me, inviteAs);
}

/**
 * The role an invitation grants: a valid one, at least as restricted as the caller's own (spec
 * 4.6). Refusals in the words of Zulip's check_role_based_permissions: an owner invitation needs
 * an owner, any other role above the caller's an administrator.
 */
export function checkInviteRole(me: Pick<UserRow, "role">, inviteAs: number): void {
  if (!VALID_ROLES.includes(inviteAs)) throw badRequest("Must be invited as an valid type of user");
  if (inviteAs === ROLE.owner && me.role !== ROLE.owner) throw badRequest("Must be an organization owner");
  if (inviteAs < me.role) throw badRequest("Must be an organization administrator");
}

/** Every channel must be accessible to the caller; only then is subscribing others checked. */
export async function checkInviteChannels(deps: AccountsDeps, who: Identity, me: UserRow, realm: RealmRow, streamIds: number[]): Promise<void> {
  if (!streamIds.length) return;
  const accessible = new Set((await messagingOf(deps).accessibleStreams(who)).map((s) => s.stream_id));
  for (const id of streamIds) {
    if (!accessible.has(id)) throw badRequest(`Invalid channel ID ${id}. No invites were sent.`);
  }
  if (!policyAllows(realm.inviteToStreamPolicy, me, realm, deps.clock.now())) {
    throw badRequest("You do not have permission to subscribe other users to channels.");
  }
}

/** When an invitation made now expires: the server's default validity unless given; null never. */
export function checkInviteExpiry(deps: AccountsDeps, expiresInMinutes: number | null | undefined, now: Date): Date | null {
  const minutes = expiresInMinutes === undefined ? deps.config.INVITATION_VALIDITY_MINUTES : expiresInMinutes;
  if (minutes === null) return null;
  const expiresAt = new Date(now.getTime() + minutes * 60_000);
  // Past the last representable date it could not be stored (nor read by Python clients).
  if (minutes <= 0 || !(expiresAt.getTime() <= MAX_DATE_MS)) throw badRequest("Invalid invite_expires_in_minutes");
  return expiresAt;
}

/** The daily limit over the realm's invitations (resends included), under the realm's invitation lock. */
async function checkDailyInviteLimit(tx: Queryable, deps: AccountsDeps, realm: RealmRow, now: Date, adding: number): Promise<void> {
  // Serializes a realm's invitations so the daily limit holds under concurrency.
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('accounts.invites'), $1::int)", [realm.id]);
  const limit = realm.maxInvitesPerDay ?? deps.config.INVITES_DAILY_LIMIT;
  const sentToday = await countInvitesSince(tx, realm.id, new Date(now.getTime() - 86_400_000));
  if (sentToday + adding > limit) {
    throw invitationFailed(
      "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
      [],
      { sent: false, daily: true },
    );
  }
}

/**
 * An organization anyone may join would otherwise let a fresh account mail invitations at once:
 * there, as Zulip's do_invite_users, an account younger than INVITES_MIN_USER_AGE_DAYS sends
 * none unless it is an administrator.
 */
function checkInviterAge(deps: AccountsDeps, me: UserRow, realm: RealmRow, now: Date): void {
  if (realm.inviteRequired || me.role <= ROLE.administrator) return;
  if (me.dateJoined.getTime() > now.getTime() - deps.config.INVITES_MIN_USER_AGE_DAYS * 86_400_000) {
    throw invitationFailed("Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.", [], { sent: false });
  }
}

/**
 * POST /invites: all-or-nothing for invalid addresses (malformed, or refused by the
 * organization's email rules); existing accounts are skipped and reported.
 */
export async function doSendInvites(deps: AccountsDeps, who: Identity, p: SendInvitesInput): Promise<void> {
  const [me, realm] = await Promise.all([getUser(deps.pool, who.realmId, who.userId), getRealm(deps.pool, who.realmId)]);
  if (!me || !realm) throw badRequest("No such user");
  checkInviter(deps, who, me, realm, p.inviteAs);
  const emails = parseInviteeEmails(p.inviteeEmails);
  if (!emails.length) throw badRequest("You must specify at least one email address.");
  const now = deps.clock.now();
  const expiresAt = checkInviteExpiry(deps, p.expiresInMinutes, now);
  await checkInviteChannels(deps, who, me, realm, p.streamIds);

  const skipped = await withTx(deps.pool, async (tx) => {
    await checkDailyInviteLimit(tx, deps, realm, now, emails.length);
    checkInviterAge(deps, me, realm, now);
    // Each address as Zulip's validate_email_is_valid: its form, then the organization's rules.
    const refusal = await getRealmEmailValidator(tx, realm);
    const invalid: Array<[string, string, boolean]> = [];
    const valid: string[] = [];
    for (const e of emails) {
      const refused = isValidEmail(e) ? refusal(e) : "invalid";
      if (refused === "invalid") invalid.push([e, "Invalid address.", false]);
      else if (refused) invalid.push([e, INVITE_REFUSALS[refused], false]);
      else valid.push(e);
    }
    // Accounts by their real address (Zulip's get_existing_user_errors looks at delivery
    // emails), so an account whose address is hidden behind a stand-in API email counts too.
    const holders = await getUsersByAddresses(tx, who.realmId, valid);
    const existing = new Map([...holders.map((u) => [u.email.toLowerCase(), u] as const), ...holders.map((u) => [u.deliveryEmail.toLowerCase(), u] as const)]);
    const skipped: Array<[string, string, boolean]> = [];
    const toInvite: string[] = [];
    for (const e of valid) {
      const u = existing.get(e.toLowerCase());
      if (!u) toInvite.push(e);
      else skipped.push([e, u.isActive ? "Already has an account." : "Account has been deactivated.", !u.isActive]);
    }
    if (invalid.length) {
      throw invitationFailed("Some emails did not validate, so we didn't send any invitations.", [...invalid, ...skipped], { sent: false });
    }
    if (!toInvite.length) throw invitationFailed("We weren't able to invite anyone.", skipped, { sent: false });
    for (const email of toInvite) {
      const key = randomToken();
      await insertInvite(tx, {
        realmId: who.realmId,
        email,
        referrerId: who.userId,
        invitedAs: p.inviteAs,
        streamIds: [...new Set(p.streamIds)],
        includeRealmDefaultSubscriptions: p.includeRealmDefaultSubscriptions,
        notifyReferrerOnJoin: p.notifyReferrerOnJoin,
        // The key travels only in the mail; only its hash is kept.
        keyHash: hashApiKey(key),
        invitedAt: now,
        expiresAt,
      });
      await queueInvitationMail(tx, deps, realm, me, email, key, expiresAt);
    }
    await notifyInvitesChanged(tx, who.realmId, who.userId);
    return skipped;
  });
  // The other addresses were invited (committed above); the error reports the skipped ones.
  if (skipped.length) {
    throw invitationFailed(
      "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
      skipped,
      { sent: true },
    );
  }
}

/**
 * Who may manage someone else's invitation (Zulip's check_role_based_permissions with
 * require_admin): an administrator, and for an owner invitation an owner.
 */
export function checkManagesInvite(who: Identity, invite: { referrerId: number; invitedAs: number }): void {
  if (invite.referrerId === who.userId) return;
  if (invite.invitedAs === ROLE.owner && who.role !== ROLE.owner) throw badRequest("Must be an organization owner");
  // A plain error, as in Zulip's invitation views (not the admin-only endpoints' UNAUTHORIZED_PRINCIPAL).
  if (who.role > ROLE.administrator) throw badRequest("Must be an organization administrator");
}

/**
 * DELETE /invites/{id}: the referrer, or an administrator (an owner for owner invitations). An
 * invitation that expired unused may still be revoked, as Zulip's revoke_user_invite finds it
 * until it is cleaned up (a list fetched before it expired still offers it); an accepted or
 * revoked one is "No such invitation".
 */
export async function doRevokeInvite(deps: AccountsDeps, who: Identity, inviteId: number): Promise<void> {
  checkGroupsApiCaller(who);
  await withTx(deps.pool, async (tx) => {
    const invite = await lockPendingInvite(tx, who.realmId, inviteId);
    if (!invite) throw badRequest("No such invitation");
    checkManagesInvite(who, invite);
    await setInviteStatus(tx, who.realmId, invite.id, INVITE_STATUS.revoked);
    await notifyInvitesChanged(tx, who.realmId, invite.referrerId);
  });
}

/**
 * POST /invites/{id}/resend, as Zulip's do_resend_user_invite_email: who may revoke may resend;
 * the invitation gets a new link (the old one stops working, as Zulip clears its confirmation)
 * valid as long again as it was when last sent, and counts against the daily limit. The new
 * link is mailed; as for POST /invites, only the key's hash is kept. Only invitations GET
 * /invites lists can be resent (pending and unexpired); others are "No such invitation".
 */
export async function doResendInvite(deps: AccountsDeps, who: Identity, inviteId: number): Promise<void> {
  checkGroupsApiCaller(who);
  const now = deps.clock.now();
  await withTx(deps.pool, async (tx) => {
    const realm = await getRealm(tx, who.realmId);
    const invite = await getPendingInvite(tx, who.realmId, inviteId, now);
    if (!realm || !invite) throw badRequest("No such invitation");
    checkManagesInvite(who, invite);
    await checkDailyInviteLimit(tx, deps, realm, now, 1);
    const sentAt = invite.lastSentAt ?? invite.invitedAt;
    const stretched = invite.expiresAt && new Date(now.getTime() + (invite.expiresAt.getTime() - sentAt.getTime()));
    const expiresAt = stretched && stretched.getTime() > MAX_DATE_MS ? new Date(MAX_DATE_MS) : stretched;
    const key = randomToken();
    await markInviteResent(tx, who.realmId, invite.id, hashApiKey(key), now, expiresAt);
    // From the one who sent it first, as Zulip's resend.
    const referrer = await getUser(tx, who.realmId, invite.referrerId);
    await queueInvitationMail(tx, deps, realm, referrer ?? (await getUser(tx, who.realmId, who.userId))!, invite.email, key, expiresAt);
    await notifyInvitesChanged(tx, who.realmId, invite.referrerId);
  });
}

/**
 * Creates the invitee's account with the invitation's role. The invitation's channels and the
 * referrer's notice are done by this service's own consumer of `accounts.invite.accepted`, so
 * they are retried until messaging has done them.
 */
export async function doAcceptInvite(deps: AccountsDeps, p: { realmId: number; email: string; fullName: string; password?: string }) {
  return withTx(deps.pool, async (tx) => {
    const invite = await lockUsableInviteForEmail(tx, p.realmId, p.email.trim(), deps.clock.now());
    return acceptInTx(tx, deps, invite, p);
  });
}

/** The same through the link an invitation's mail carries (`/accounts/do_confirm/{key}`). */
export async function doAcceptInviteByKey(deps: AccountsDeps, key: string, p: { fullName: string; password: string }) {
  return withTx(deps.pool, async (tx) => {
    const invite = await lockUsableInviteByKeyHash(tx, hashApiKey(key), deps.clock.now());
    return acceptInTx(tx, deps, invite, p);
  });
}

export const linkExpired = () => badRequest("The confirmation link has expired or been deactivated.");

/** Whether an error is linkExpired's (pages show their expired page for it). */
export const isLinkExpired = (err: unknown) => err instanceof ApiError && err.message === linkExpired().message;

/** What the sign-up page of an invitation's link shows; null when the link is not (or no longer) usable. */
export async function getInviteByKey(deps: AccountsDeps, key: string): Promise<{ invite: InviteRow; realm: RealmRow } | null> {
  const invite = await getUsableInviteByKeyHash(deps.pool, hashApiKey(key), deps.clock.now());
  const realm = invite && (await getRealm(deps.pool, invite.realmId));
  return invite && realm && !realm.deactivated ? { invite, realm } : null;
}

async function acceptInTx(tx: Queryable, deps: AccountsDeps, invite: InviteRow | null, p: { fullName: string; password?: string }) {
  const realm = invite && (await getRealm(tx, invite.realmId));
  if (!invite || !realm || realm.deactivated) throw linkExpired();
  const { user, apiKey } = await createUserInTx(tx, deps, {
    realmId: invite.realmId,
    email: invite.email,
    fullName: p.fullName,
    role: invite.invitedAs,
    password: p.password ?? null,
    // The organization's rules at sign-up, which may have changed since the invitation.
    emailRefusals: SIGNUP_REFUSALS,
  });
  await setInviteStatus(tx, invite.realmId, invite.id, INVITE_STATUS.accepted, user.id);
  await revokeOtherInvitesForEmail(tx, invite.realmId, invite.email, invite.id);
  await emitEvent(tx, {
    type: "accounts.invite.accepted",
    realmId: invite.realmId,
    payload: {
      invite_id: invite.id,
      user_id: user.id,
      referrer_id: invite.referrerId,
      stream_ids: invite.streamIds,
      include_realm_default_subscriptions: invite.includeRealmDefaultSubscriptions,
      notify_referrer_on_join: invite.notifyReferrerOnJoin,
    },
  });
  await notifyInvitesChanged(tx, invite.realmId, invite.referrerId);
  return { user, apiKey };
}

export async function doCleanupExpiredInvites(deps: AccountsDeps): Promise<number> {
  return withTx(deps.pool, (tx) => deleteExpiredInvites(tx, deps.clock.now()));
}

const identityOf = (u: UserRow): Identity => ({
  userId: u.id,
  realmId: u.realmId,
  role: u.role as Identity["role"],
  isBot: u.isBot,
  email: u.email,
  client: "internal",
});

export interface InviteAccepted {
  invite_id: number;
  user_id: number;
  referrer_id: number;
  stream_ids: number[];
  include_realm_default_subscriptions: boolean;
  notify_referrer_on_join: boolean;
}

/**
 * Consumer side of an accepted invitation: the new user joins the invitation's channels (checked
 * against the inviter's access when inviting; nobody acts now, as in Zulip) and the
 * notification bot tells the referrer. Both calls are idempotent, so a retry repeats nothing.
 * With `include_realm_default_subscriptions` (Zulip's, default false) the organization's default
 * channels too.
 */
export async function doCompleteInviteAcceptance(deps: AccountsDeps, realmId: number, e: InviteAccepted): Promise<void> {
  const messaging = messagingOf(deps);
  const [newUser, referrer, realm] = await Promise.all([
    getUser(deps.pool, realmId, e.user_id),
    getUser(deps.pool, realmId, e.referrer_id),
    getRealm(deps.pool, realmId),
  ]);
  if (!newUser || !newUser.isActive || !realm) return;
  await messaging.subscribeNewUser(realmId, newUser.id, e.stream_ids, e.include_realm_default_subscriptions);
  if (e.notify_referrer_on_join && referrer && referrer.isActive && realm.notificationBotId) {
    const bot = await getUser(deps.pool, realmId, realm.notificationBotId);
    if (bot) {
      const content = `@_**${newUser.fullName}|${newUser.id}** accepted your invitation to join ${realm.name}!`;
      await messaging.sendDirect(identityOf(bot), [referrer.id], content, `invite-accepted:${e.invite_id}`);
    }
  }
}
