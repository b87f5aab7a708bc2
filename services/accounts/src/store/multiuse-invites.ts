import type { Queryable } from "@chat/platform";

export const MULTIUSE_STATUS = { active: 0, revoked: 2 } as const;

export interface MultiuseInviteRow {
  id: number;
  realmId: number;
  referrerId: number;
  invitedAs: number;
  streamIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  confirmationKey: string;
  createdAt: Date;
  expiresAt: Date | null;
  status: number;
}

const toMultiuse = (r: any): MultiuseInviteRow => ({
  id: Number(r.id),
  realmId: Number(r.realm_id),
  referrerId: Number(r.referrer_id),
  invitedAs: r.invited_as,
  streamIds: (r.stream_ids ?? []).map(Number),
  includeRealmDefaultSubscriptions: r.include_realm_default_subscriptions,
  confirmationKey: r.confirmation_key,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  status: r.status,
});

export interface NewMultiuseInvite {
  realmId: number;
  referrerId: number;
  invitedAs: number;
  streamIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  confirmationKey: string;
  createdAt: Date;
  expiresAt: Date | null;
}

export async function insertMultiuseInvite(db: Queryable, i: NewMultiuseInvite): Promise<MultiuseInviteRow> {
  const { rows } = await db.query(
    `INSERT INTO multiuse_invites (realm_id, referrer_id, invited_as, stream_ids, include_realm_default_subscriptions, confirmation_key, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [i.realmId, i.referrerId, i.invitedAs, i.streamIds, i.includeRealmDefaultSubscriptions, i.confirmationKey, i.createdAt, i.expiresAt],
  );
  return toMultiuse(rows[0]);
}

/** Any link of the realm, revoked or expired ones included, locked for a change. */
export async function lockMultiuseInvite(db: Queryable, realmId: number, id: number): Promise<MultiuseInviteRow | null> {
  const { rows } = await db.query("SELECT * FROM multiuse_invites WHERE realm_id = $1 AND id = $2 FOR UPDATE", [realmId, id]);
  return rows[0] ? toMultiuse(rows[0]) : null;
}

/** A usable link by its key; shared-locked so that a revocation waits for sign-ups in progress. */
export async function lockUsableMultiuseInviteByKey(db: Queryable, realmId: number, key: string, now: Date): Promise<MultiuseInviteRow | null> {
  const { rows } = await db.query(
    `SELECT * FROM multiuse_invites WHERE realm_id = $1 AND confirmation_key = $2 AND status = 0
        AND (expires_at IS NULL OR expires_at > $3) FOR SHARE`,
    [realmId, key, now],
  );
  return rows[0] ? toMultiuse(rows[0]) : null;
}

/** Usable, unexpired links; optionally only those one user created. */
export async function listUsableMultiuseInvites(db: Queryable, realmId: number, now: Date, referrerId: number | null): Promise<MultiuseInviteRow[]> {
  const { rows } = await db.query(
    `SELECT * FROM multiuse_invites WHERE realm_id = $1 AND status = 0 AND (expires_at IS NULL OR expires_at > $2)
       AND ($3::bigint IS NULL OR referrer_id = $3) ORDER BY id`,
    [realmId, now, referrerId],
  );
  return rows.map(toMultiuse);
}

export async function setMultiuseInviteStatus(db: Queryable, realmId: number, id: number, status: number): Promise<void> {
  await db.query("UPDATE multiuse_invites SET status = $3 WHERE realm_id = $1 AND id = $2", [realmId, id, status]);
}

/** A deactivated user's usable links stop working with their email invitations; returns how many there were. */
export async function revokeUsableMultiuseInvitesBy(db: Queryable, realmId: number, referrerId: number): Promise<number> {
  const { rowCount } = await db.query("UPDATE multiuse_invites SET status = 2 WHERE realm_id = $1 AND referrer_id = $2 AND status = 0", [realmId, referrerId]);
  return rowCount ?? 0;
}
