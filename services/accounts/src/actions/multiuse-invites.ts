import { badRequest, emitEvent, withTx, type Identity } from "@chat/platform";
import { randomBytes } from "node:crypto";
import type { AccountsDeps } from "../deps";
import { SIGNUP_REFUSALS } from "../lib/email-validation";
import { multiuseInviteLink } from "../queries/invites";
import { checkGroupsApiCaller } from "../queries/user-groups";
import {
  insertMultiuseInvite,
  lockMultiuseInvite,
  lockUsableMultiuseInviteByKey,
  MULTIUSE_STATUS,
  setMultiuseInviteStatus,
} from "../store/multiuse-invites";
import { getRealm } from "../store/realms";
import { isRecursiveMember, systemGroupIds } from "../store/user-groups";
import { getUser } from "../store/users";
import { checkInviteChannels, checkInviteExpiry, checkInviteRole, checkManagesInvite, linkExpired } from "./invites";
import { notifyInvitesChanged, revokeInvitesToNewAccountInTx } from "./invites-changed";
import { createUserInTx } from "./users";

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** Zulip's confirmation key: 15 random bytes in lowercase base32 (24 characters). */
function confirmationKey(): string {
  const bytes = randomBytes(15);
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

export interface CreateMultiuseInviteInput {
  expiresInMinutes: number | null | undefined;
  inviteAs: number;
  streamIds: number[];
  includeRealmDefaultSubscriptions: boolean;
}

/**
 * POST /invites/multiuse, as Zulip's generate_multiuse_invite_backend (feature level 209 on):
 * guests and bots are refused, then whoever is outside the realm's create_multiuse_invite_group
 * (a system group, administrators unless PATCH /realm changed it), then the role
 * (at least as restricted as the caller's own, as for POST /invites), the validity, and the
 * channels as POST /invites checks them. Answers the link.
 */
export async function doCreateMultiuseInvite(deps: AccountsDeps, who: Identity, p: CreateMultiuseInviteInput): Promise<string> {
  checkGroupsApiCaller(who);
  const [me, realm, groups] = await Promise.all([getUser(deps.pool, who.realmId, who.userId), getRealm(deps.pool, who.realmId), systemGroupIds(deps.pool, who.realmId)]);
  if (!me || !realm) throw badRequest("No such user");
  if (!(await isRecursiveMember(deps.pool, who.realmId, groups[realm.createMultiuseInviteGroup], who.userId))) throw badRequest("Insufficient permission");
  checkInviteRole(me, p.inviteAs);
  const now = deps.clock.now();
  const expiresAt = checkInviteExpiry(deps, p.expiresInMinutes, now);
  await checkInviteChannels(deps, who, me, realm, p.streamIds);
  return withTx(deps.pool, async (tx) => {
    const invite = await insertMultiuseInvite(tx, {
      realmId: who.realmId,
      referrerId: who.userId,
      invitedAs: p.inviteAs,
      streamIds: [...new Set(p.streamIds)],
      includeRealmDefaultSubscriptions: p.includeRealmDefaultSubscriptions,
      confirmationKey: confirmationKey(),
      createdAt: now,
      expiresAt,
    });
    await notifyInvitesChanged(tx, who.realmId, who.userId);
    return multiuseInviteLink(deps, realm, invite);
  });
}

/**
 * DELETE /invites/multiuse/{id}, as Zulip's revoke_multiuse_invite: another organization's or an
 * unknown link is "No such invitation"; the creator, or an administrator (an owner for owner
 * links), may revoke, an expired link too; a second revocation is refused.
 */
export async function doRevokeMultiuseInvite(deps: AccountsDeps, who: Identity, inviteId: number): Promise<void> {
  checkGroupsApiCaller(who);
  await withTx(deps.pool, async (tx) => {
    const invite = await lockMultiuseInvite(tx, who.realmId, inviteId);
    if (!invite) throw badRequest("No such invitation");
    checkManagesInvite(who, invite);
    if (invite.status === MULTIUSE_STATUS.revoked) throw badRequest("Invitation has already been revoked");
    await setMultiuseInviteStatus(tx, who.realmId, invite.id, MULTIUSE_STATUS.revoked);
    await notifyInvitesChanged(tx, who.realmId, invite.referrerId);
  });
}

/**
 * Signs up through a reusable link, as /internal/invites/accept does through an email
 * invitation: the account gets the link's role, and the link's channels follow through
 * `accounts.invite.accepted`. The link stays usable. Its creator is not told (Zulip's sign-ups
 * through a link have no referrer). Pending email invitations to the address are void now;
 * those who manage them are told when there were any.
 */
export async function doAcceptMultiuseInvite(deps: AccountsDeps, p: { realmId: number; key: string; email: string; fullName: string; password?: string }) {
  return withTx(deps.pool, async (tx) => {
    const realm = await getRealm(tx, p.realmId);
    if (!realm || realm.deactivated) throw linkExpired();
    const invite = await lockUsableMultiuseInviteByKey(tx, p.realmId, p.key.trim(), deps.clock.now());
    if (!invite) throw linkExpired();
    const { user, apiKey } = await createUserInTx(tx, deps, {
      realmId: p.realmId,
      email: p.email,
      fullName: p.fullName,
      role: invite.invitedAs,
      password: p.password ?? null,
      // A reusable link lets in only addresses the organization's email rules allow.
      emailRefusals: SIGNUP_REFUSALS,
    });
    await emitEvent(tx, {
      type: "accounts.invite.accepted",
      realmId: p.realmId,
      payload: {
        invite_id: invite.id,
        user_id: user.id,
        referrer_id: invite.referrerId,
        stream_ids: invite.streamIds,
        include_realm_default_subscriptions: invite.includeRealmDefaultSubscriptions,
        notify_referrer_on_join: false,
        is_multiuse: true,
      },
    });
    await revokeInvitesToNewAccountInTx(tx, user);
    return { user, apiKey };
  });
}
