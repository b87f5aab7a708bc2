import { emitEvent, type Queryable } from "@chat/platform";
import { revokePendingInvitesBy, revokePendingInvitesForEmail } from "../store/invites";
import { revokeUsableMultiuseInvitesBy } from "../store/multiuse-invites";
import type { UserRow } from "../store/users";

/**
 * Invitation lists changed: administrators and the referrer refresh theirs (Zulip's
 * notify_invites_changed). Administrators are every active account with the role, bots with an
 * administrator's role included, as Zulip's get_admin_users_and_bots has them. Apart from
 * invites.ts because deactivation uses it too.
 */
export async function notifyInvitesChanged(tx: Queryable, realmId: number, referrerId: number | number[] | null): Promise<void> {
  const { rows } = await tx.query("SELECT id FROM users WHERE realm_id = $1 AND is_active AND role <= 200 AND NOT is_system_bot", [realmId]);
  const ids = rows.map((r) => Number(r.id));
  const users = [...new Set([...ids, ...(referrerId === null ? [] : [referrerId].flat())])];
  await emitEvent(tx, { type: "accounts.invites.changed", realmId, payload: { client: { event: { type: "invites_changed" }, users } } });
}

/**
 * A deactivated user's pending invitations and reusable links stop working, as Zulip's
 * revoke_invites_generated_by_user does; the administrators' lists change when any did.
 */
export async function revokeInvitesGeneratedByUserInTx(tx: Queryable, user: Pick<UserRow, "realmId" | "id">): Promise<void> {
  const revoked = (await revokePendingInvitesBy(tx, user.realmId, user.id)) + (await revokeUsableMultiuseInvitesBy(tx, user.realmId, user.id));
  if (revoked > 0) await notifyInvitesChanged(tx, user.realmId, null);
}

/**
 * An account now has this address, however it was made (an administrator's POST /users, the
 * operator's CLI, a reusable link): pending email invitations to it are void, as Zulip's
 * process_new_human_user revokes them, and those who manage them refresh their lists.
 */
export async function revokeInvitesToNewAccountInTx(tx: Queryable, user: Pick<UserRow, "realmId" | "deliveryEmail" | "isBot">): Promise<void> {
  if (user.isBot) return;
  const referrers = await revokePendingInvitesForEmail(tx, user.realmId, user.deliveryEmail);
  if (referrers.length) await notifyInvitesChanged(tx, user.realmId, referrers);
}
