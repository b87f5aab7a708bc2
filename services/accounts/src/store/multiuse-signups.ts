import type { Queryable } from "@chat/platform";

/** A reusable link as its sign-up pages need it (found by its key alone: keys are unique). */
export interface MultiuseLinkRow {
  id: number;
  realmId: number;
  confirmationKey: string;
  invitedAs: number;
}

/** An address's confirmation of a sign-up through a reusable link. */
export interface MultiuseSignupRow {
  id: number;
  realmId: number;
  multiuseInviteId: number;
  email: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

const toLink = (r: any): MultiuseLinkRow => ({
  id: Number(r.id),
  realmId: Number(r.realm_id),
  confirmationKey: r.confirmation_key,
  invitedAs: r.invited_as,
});

const toSignup = (r: any): MultiuseSignupRow => ({
  id: Number(r.id),
  realmId: Number(r.realm_id),
  multiuseInviteId: Number(r.multiuse_invite_id),
  email: r.email,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at ?? null,
});

const USABLE_LINK = "status = 0 AND (expires_at IS NULL OR expires_at > $2)";

/** A usable (not revoked, unexpired) reusable link by its key. */
export async function getUsableMultiuseLinkByKey(db: Queryable, key: string, now: Date): Promise<MultiuseLinkRow | null> {
  const { rows } = await db.query(`SELECT * FROM multiuse_invites WHERE confirmation_key = $1 AND ${USABLE_LINK}`, [key, now]);
  return rows[0] ? toLink(rows[0]) : null;
}

/** A usable link by id. */
export async function getUsableMultiuseLink(db: Queryable, id: number, now: Date): Promise<MultiuseLinkRow | null> {
  const { rows } = await db.query(`SELECT * FROM multiuse_invites WHERE id = $1 AND ${USABLE_LINK}`, [id, now]);
  return rows[0] ? toLink(rows[0]) : null;
}

/** The same, shared-locked so that a revocation waits for the mail being queued. */
export async function lockUsableMultiuseLink(db: Queryable, id: number, now: Date): Promise<MultiuseLinkRow | null> {
  const { rows } = await db.query(`SELECT * FROM multiuse_invites WHERE id = $1 AND ${USABLE_LINK} FOR SHARE`, [id, now]);
  return rows[0] ? toLink(rows[0]) : null;
}

export interface NewMultiuseSignup {
  realmId: number;
  multiuseInviteId: number;
  email: string;
  keyHash: string;
  createdAt: Date;
  expiresAt: Date;
}

export async function insertMultiuseSignup(db: Queryable, s: NewMultiuseSignup): Promise<void> {
  await db.query(
    `INSERT INTO multiuse_signups (realm_id, multiuse_invite_id, email, key_hash, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [s.realmId, s.multiuseInviteId, s.email, s.keyHash, s.createdAt, s.expiresAt],
  );
}

/** Confirmations mailed to an address (in any organization) since `since`. */
export async function countMultiuseSignupsSince(db: Queryable, email: string, since: Date): Promise<number> {
  const { rows } = await db.query("SELECT count(*)::int AS n FROM multiuse_signups WHERE lower(email) = lower($1) AND created_at > $2", [email, since]);
  return rows[0].n;
}

/**
 * Up to `limit` confirmations created before `before`, skipping rows another transaction is
 * deleting (so that concurrent sign-ups neither wait for nor deadlock on each other); returns how many.
 */
export async function deleteMultiuseSignupsBefore(db: Queryable, before: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM multiuse_signups WHERE id IN (
       SELECT id FROM multiuse_signups WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [before, limit],
  );
  return rowCount ?? 0;
}

/** An unused, unexpired confirmation by its key's hash. */
export async function getUsableMultiuseSignupByKeyHash(db: Queryable, keyHash: string, now: Date): Promise<MultiuseSignupRow | null> {
  const { rows } = await db.query("SELECT * FROM multiuse_signups WHERE key_hash = $1 AND used_at IS NULL AND expires_at > $2", [keyHash, now]);
  return rows[0] ? toSignup(rows[0]) : null;
}

/** Marks a confirmation used unless it already is; whether this call did. */
export async function claimMultiuseSignup(db: Queryable, id: number, now: Date): Promise<boolean> {
  const { rowCount } = await db.query("UPDATE multiuse_signups SET used_at = $2 WHERE id = $1 AND used_at IS NULL", [id, now]);
  return rowCount === 1;
}

/** Makes a claimed confirmation usable again (the sign-up it was claimed for failed). */
export async function releaseMultiuseSignup(db: Queryable, id: number): Promise<void> {
  await db.query("UPDATE multiuse_signups SET used_at = NULL WHERE id = $1", [id]);
}
