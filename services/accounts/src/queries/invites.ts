import type { Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { ROLE } from "../lib/format";
import { listPendingInvites } from "../store/invites";
import { checkGroupsApiCaller } from "./user-groups";

/** GET /invites: administrators see every pending invitation, others only their own. */
export async function getInvites(deps: AccountsDeps, who: Identity) {
  checkGroupsApiCaller(who);
  const rows = await listPendingInvites(deps.pool, who.realmId, deps.clock.now(), who.role <= ROLE.administrator ? null : who.userId);
  return rows.map((i) => ({
    id: i.id,
    invited_by_user_id: i.referrerId,
    invited: Math.floor(i.invitedAt.getTime() / 1000),
    expiry_date: i.expiresAt ? Math.floor(i.expiresAt.getTime() / 1000) : null,
    invited_as: i.invitedAs,
    email: i.email,
    notify_referrer_on_join: i.notifyReferrerOnJoin,
    is_multiuse: false,
  }));
}
