import { InternalGetDigestRecipients } from "@chat/contracts";
import { InternalClient } from "@chat/platform";
import type { MessagingConfig } from "../config";

/** An organization whose digest day it is, with its users who are due one (accounts' answer). */
export interface DigestRealm {
  realmId: number;
  users: Array<{ userId: number; deliveryEmail: string; fullName: string; role: number; lastActive: Date | null }>;
  /** Active humans who joined in the past week. */
  joined: Array<{ userId: number; dateJoined: Date }>;
}

type Answer = {
  realms: Array<{
    realm_id: number;
    users: Array<{ user_id: number; delivery_email: string; full_name: string; role: number; last_active_time: number | null }>;
    joined: Array<{ user_id: number; date_joined: number }>;
  }>;
};

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** Asks accounts who is due a digest on `weekday` (its internal route /internal/digest_recipients). */
export async function fetchDigestRecipients(
  config: Pick<MessagingConfig, "ACCOUNTS_URL" | "INTERNAL_TOKEN">,
  q: { weekday: number; inactiveSince: Date; joinedSince: Date },
): Promise<DigestRealm[]> {
  const http = new InternalClient(config.ACCOUNTS_URL, config.INTERNAL_TOKEN);
  const res = await http.call<Answer>(InternalGetDigestRecipients.method, InternalGetDigestRecipients.path, {
    params: { weekday: q.weekday, inactive_since: seconds(q.inactiveSince), joined_since: seconds(q.joinedSince) },
  });
  return res.realms.map((r) => ({
    realmId: r.realm_id,
    users: r.users.map((u) => ({
      userId: u.user_id,
      deliveryEmail: u.delivery_email,
      fullName: u.full_name,
      role: u.role,
      lastActive: u.last_active_time === null ? null : new Date(u.last_active_time * 1000),
    })),
    joined: r.joined.map((j) => ({ userId: j.user_id, dateJoined: new Date(j.date_joined * 1000) })),
  }));
}
