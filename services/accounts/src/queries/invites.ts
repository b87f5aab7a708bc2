import { organizationUrl, type Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { ROLE } from "../lib/format";
import { listPendingInvites } from "../store/invites";
import { listUsableMultiuseInvites, type MultiuseInviteRow } from "../store/multiuse-invites";
import { getRealm, type RealmRow } from "../store/realms";
import { checkGroupsApiCaller } from "./user-groups";

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** A reusable link's URL, as Zulip's confirmation_url for a multiuse invitation: `{realm_url}/join/{key}/`. */
export function multiuseInviteLink(deps: AccountsDeps, realm: Pick<RealmRow, "stringId">, invite: Pick<MultiuseInviteRow, "confirmationKey">): string {
  return `${organizationUrl(deps.config, realm.stringId)}/join/${invite.confirmationKey}/`;
}

/**
 * GET /invites, as Zulip's do_get_invites_controlled_by_user: administrators see every pending
 * invitation and usable link, others only their own; email invitations first, then links.
 */
export async function getInvites(deps: AccountsDeps, who: Identity) {
  checkGroupsApiCaller(who);
  const now = deps.clock.now();
  const referrer = who.role <= ROLE.administrator ? null : who.userId;
  const [emails, links, realm] = await Promise.all([
    listPendingInvites(deps.pool, who.realmId, now, referrer),
    listUsableMultiuseInvites(deps.pool, who.realmId, now, referrer),
    getRealm(deps.pool, who.realmId),
  ]);
  return [
    ...emails.map((i) => ({
      id: i.id,
      invited_by_user_id: i.referrerId,
      // A resent invitation shows when it was last sent, as Zulip's resend moves invited_at.
      invited: seconds(i.lastSentAt ?? i.invitedAt),
      expiry_date: i.expiresAt ? seconds(i.expiresAt) : null,
      invited_as: i.invitedAs,
      email: i.email,
      notify_referrer_on_join: i.notifyReferrerOnJoin,
      is_multiuse: false,
    })),
    ...links.map((i) => ({
      id: i.id,
      invited_by_user_id: i.referrerId,
      invited: seconds(i.createdAt),
      expiry_date: i.expiresAt ? seconds(i.expiresAt) : null,
      invited_as: i.invitedAs,
      link_url: multiuseInviteLink(deps, realm ?? { stringId: "" }, i),
      is_multiuse: true,
    })),
  ];
}
