import { InternalGetDigestRecipients } from "@chat/contracts";
import { InternalClient } from "@chat/platform";
import type { MessagingConfig } from "../config";

/** A user who is due a digest today (accounts' answer). */
export interface DigestRecipient {
  realmId: number;
  userId: number;
  deliveryEmail: string;
  fullName: string;
  role: number;
  lastActive: Date | null;
  /** Others of the organization who joined while the user was away (within the digest's window). */
  newUsers: number;
}

type Answer = {
  users: Array<{
    realm_id: number;
    user_id: number;
    delivery_email: string;
    full_name: string;
    role: number;
    last_active_time: number | null;
    new_users: number;
  }>;
};

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * Asks accounts who is due a digest on `weekday` (its internal route /internal/digest_recipients):
 * the first `limit` by user id after `afterUserId`; fewer than `limit` is the last page.
 */
export async function fetchDigestRecipients(
  config: Pick<MessagingConfig, "ACCOUNTS_URL" | "INTERNAL_TOKEN">,
  q: { weekday: number; inactiveSince: Date; joinedSince: Date; afterUserId: number; limit: number },
): Promise<DigestRecipient[]> {
  const http = new InternalClient(config.ACCOUNTS_URL, config.INTERNAL_TOKEN);
  const res = await http.call<Answer>(InternalGetDigestRecipients.method, InternalGetDigestRecipients.path, {
    params: {
      weekday: q.weekday,
      inactive_since: seconds(q.inactiveSince),
      joined_since: seconds(q.joinedSince),
      after_user_id: q.afterUserId,
      limit: q.limit,
    },
  });
  return res.users.map((u) => ({
    realmId: u.realm_id,
    userId: u.user_id,
    deliveryEmail: u.delivery_email,
    fullName: u.full_name,
    role: u.role,
    lastActive: u.last_active_time === null ? null : new Date(u.last_active_time * 1000),
    newUsers: u.new_users,
  }));
}
