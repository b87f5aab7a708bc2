import type { Queryable } from "@chat/platform";

export const INVITE_STATUS = { pending: 0, accepted: 1, revoked: 2 } as const;

export interface InviteRow {
  id: number;
  realmId: number;
  email: string;
  referrerId: number;
  invitedAs: number;
  streamIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  notifyReferrerOnJoin: boolean;
  invitedAt: Date;
  /** When the invitation was last resent; null if never. */
  lastSentAt: Date | null;
  expiresAt: Date | null;
  status: number;
}

const toInvite = (r: any): InviteRow => ({
  id: r.id,
  realmId: r.realm_id,
  email: r.email,
  referrerId: r.referrer_id,
  invitedAs: r.invited_as,
  streamIds: (r.stream_ids ?? []).map(Number),
  includeRealmDefaultSubscriptions: r.include_realm_default_subscriptions,
  notifyReferrerOnJoin: r.notify_referrer_on_join,
  invitedAt: r.invited_at,
  lastSentAt: r.last_sent_at ?? null,
  expiresAt: r.expires_at,
  status: r.status,
});

export interface NewInvite {
  realmId: number;
  email: string;
  referrerId: number;
  invitedAs: number;
  streamIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  notifyReferrerOnJoin: boolean;
  keyHash: string;
  invitedAt: Date;
  expiresAt: Date | null;
}

export async function insertInvite(db: Queryable, i: NewInvite): Promise<InviteRow> {
  const { rows } = await db.query(
    `INSERT INTO invites (realm_id, email, referrer_id, invited_as, stream_ids, include_realm_default_subscriptions,
                          notify_referrer_on_join, key_hash, invited_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
    [i.realmId, i.email, i.referrerId, i.invitedAs, i.streamIds, i.includeRealmDefaultSubscriptions, i.notifyReferrerOnJoin, i.keyHash, i.invitedAt, i.expiresAt],
  );
  return toInvite(rows[0]);
}

/** Invitations sent by the realm since `since`, resends included (the daily limit counts every one). */
export async function countInvitesSince(db: Queryable, realmId: number, since: Date): Promise<number> {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM invites WHERE realm_id = $1 AND invited_at > $2)
          + (SELECT count(*) FROM invite_resends WHERE realm_id = $1 AND resent_at > $2) AS n`,
    [realmId, since],
  );
  return Number(rows[0].n);
}

/** A resent invitation: a new key, sent now, expiring at `expiresAt`; the resend is logged for the daily limit. */
export async function markInviteResent(db: Queryable, realmId: number, id: number, keyHash: string, now: Date, expiresAt: Date | null): Promise<void> {
  await db.query("UPDATE invites SET key_hash = $3, last_sent_at = $4, expires_at = $5 WHERE realm_id = $1 AND id = $2", [realmId, id, keyHash, now, expiresAt]);
  await db.query("INSERT INTO invite_resends (realm_id, invite_id, resent_at) VALUES ($1, $2, $3)", [realmId, id, now]);
}

/** Pending, unexpired invitations; optionally only those one user sent. */
export async function listPendingInvites(db: Queryable, realmId: number, now: Date, referrerId: number | null): Promise<InviteRow[]> {
  const { rows } = await db.query(
    `SELECT * FROM invites WHERE realm_id = $1 AND status = 0 AND (expires_at IS NULL OR expires_at > $2)
       AND ($3::bigint IS NULL OR referrer_id = $3) ORDER BY id`,
    [realmId, now, referrerId],
  );
  return rows.map(toInvite);
}

export async function getPendingInvite(db: Queryable, realmId: number, id: number, now: Date): Promise<InviteRow | null> {
  const { rows } = await db.query(
    "SELECT * FROM invites WHERE realm_id = $1 AND id = $2 AND status = 0 AND (expires_at IS NULL OR expires_at > $3)",
    [realmId, id, now],
  );
  return rows[0] ? toInvite(rows[0]) : null;
}

/** A pending invitation, expired or not, locked (revoking one that expired still deletes it for Zulip). */
export async function lockPendingInvite(db: Queryable, realmId: number, id: number): Promise<InviteRow | null> {
  const { rows } = await db.query("SELECT * FROM invites WHERE realm_id = $1 AND id = $2 AND status = 0 FOR UPDATE", [realmId, id]);
  return rows[0] ? toInvite(rows[0]) : null;
}

/** The newest usable invitation for an email, locked for acceptance. */
export async function lockUsableInviteForEmail(db: Queryable, realmId: number, email: string, now: Date): Promise<InviteRow | null> {
  const { rows } = await db.query(
    `SELECT * FROM invites WHERE realm_id = $1 AND lower(email) = lower($2) AND status = 0
        AND (expires_at IS NULL OR expires_at > $3) ORDER BY invited_at DESC, id DESC LIMIT 1 FOR UPDATE`,
    [realmId, email, now],
  );
  return rows[0] ? toInvite(rows[0]) : null;
}

const USABLE_BY_KEY = "SELECT * FROM invites WHERE key_hash = $1 AND status = 0 AND (expires_at IS NULL OR expires_at > $2)";

/** The pending, unexpired invitation whose link key hashes to `keyHash`. */
export async function getUsableInviteByKeyHash(db: Queryable, keyHash: string, now: Date): Promise<InviteRow | null> {
  const { rows } = await db.query(USABLE_BY_KEY, [keyHash, now]);
  return rows[0] ? toInvite(rows[0]) : null;
}

/** The same, locked for acceptance. */
export async function lockUsableInviteByKeyHash(db: Queryable, keyHash: string, now: Date): Promise<InviteRow | null> {
  const { rows } = await db.query(`${USABLE_BY_KEY} FOR UPDATE`, [keyHash, now]);
  return rows[0] ? toInvite(rows[0]) : null;
}

export async function setInviteStatus(db: Queryable, realmId: number, id: number, status: number, acceptedUserId: number | null = null): Promise<void> {
  await db.query("UPDATE invites SET status = $3, accepted_user_id = $4 WHERE realm_id = $1 AND id = $2", [realmId, id, status, acceptedUserId]);
}

/** Once an email has an account, its other pending invitations are void. */
export async function revokeOtherInvitesForEmail(db: Queryable, realmId: number, email: string, keepId: number): Promise<void> {
  await db.query("UPDATE invites SET status = 2 WHERE realm_id = $1 AND lower(email) = lower($2) AND status = 0 AND id <> $3", [realmId, email, keepId]);
}

/** Revokes every pending invitation to an email (an account was made for it); returns their referrers. */
export async function revokePendingInvitesForEmail(db: Queryable, realmId: number, email: string): Promise<number[]> {
  const { rows } = await db.query(
    "UPDATE invites SET status = 2 WHERE realm_id = $1 AND lower(email) = lower($2) AND status = 0 RETURNING referrer_id",
    [realmId, email],
  );
  return rows.map((r) => Number(r.referrer_id));
}

/** Revokes every pending invitation one user sent; returns how many there were. */
export async function revokePendingInvitesBy(db: Queryable, realmId: number, referrerId: number): Promise<number> {
  const { rowCount } = await db.query("UPDATE invites SET status = 2 WHERE realm_id = $1 AND referrer_id = $2 AND status = 0", [realmId, referrerId]);
  return rowCount ?? 0;
}

export async function deleteExpiredInvites(db: Queryable, now: Date): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM invites WHERE status = 0 AND expires_at IS NOT NULL AND expires_at <= $1", [now]);
  return rowCount ?? 0;
}
