import type { Queryable } from "@chat/platform";

/** A requested change of a user's email address (table `email_changes`). */
export interface EmailChangeRow {
  id: number;
  realmId: number;
  userId: number;
  oldEmail: string;
  newEmail: string;
  requestedAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

function toEmailChange(r: any): EmailChangeRow {
  return {
    id: Number(r.id),
    realmId: Number(r.realm_id),
    userId: Number(r.user_id),
    oldEmail: r.old_email,
    newEmail: r.new_email,
    requestedAt: r.requested_at,
    expiresAt: r.expires_at,
    usedAt: r.used_at,
  };
}

export async function insertEmailChange(
  db: Queryable,
  c: { realmId: number; userId: number; oldEmail: string; newEmail: string; keyHash: string; requestedAt: Date; expiresAt: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO email_changes (realm_id, user_id, old_email, new_email, key_hash, requested_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [c.realmId, c.userId, c.oldEmail, c.newEmail, c.keyHash, c.requestedAt, c.expiresAt],
  );
}

/** When the user requested changes since `since`, newest first. */
export async function emailChangeTimesSince(db: Queryable, realmId: number, userId: number, since: Date): Promise<Date[]> {
  const { rows } = await db.query(
    "SELECT requested_at FROM email_changes WHERE realm_id = $1 AND user_id = $2 AND requested_at > $3 ORDER BY requested_at DESC",
    [realmId, userId, since],
  );
  return rows.map((r) => r.requested_at as Date);
}

const UNUSED_BY_KEY = "SELECT * FROM email_changes WHERE key_hash = $1 AND used_at IS NULL AND expires_at > $2";

/** The unused, unexpired change a key stands for. */
export async function getUnusedEmailChangeByKeyHash(db: Queryable, keyHash: string, now: Date): Promise<EmailChangeRow | null> {
  const { rows } = await db.query(UNUSED_BY_KEY, [keyHash, now]);
  return rows[0] ? toEmailChange(rows[0]) : null;
}

/** The same, locked for confirmation. */
export async function lockUnusedEmailChangeByKeyHash(db: Queryable, keyHash: string, now: Date): Promise<EmailChangeRow | null> {
  const { rows } = await db.query(`${UNUSED_BY_KEY} FOR UPDATE`, [keyHash, now]);
  return rows[0] ? toEmailChange(rows[0]) : null;
}

/**
 * Deletes up to `limit` changes (used or not) expired by `now` and requested no later than
 * `requestedBefore`, the start of the rate limit's window; how many went.
 */
export async function deleteExpiredEmailChanges(db: Queryable, now: Date, requestedBefore: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM email_changes WHERE id IN (
       SELECT id FROM email_changes WHERE expires_at <= $1 AND requested_at <= $2 ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED)`,
    [now, requestedBefore, limit],
  );
  return rowCount ?? 0;
}

export async function markEmailChangeUsed(db: Queryable, id: number, now: Date): Promise<void> {
  await db.query("UPDATE email_changes SET used_at = $2 WHERE id = $1", [id, now]);
}

/**
 * The users' columns an email change writes (the delivery address, and the API email with it
 * when the address is public), here beside the table the change comes from.
 */
export async function setDeliveryEmail(db: Queryable, realmId: number, userId: number, email: string, apiEmailToo: boolean): Promise<void> {
  await db.query(`UPDATE users SET delivery_email = $3${apiEmailToo ? ", email = $3" : ""} WHERE realm_id = $1 AND id = $2`, [realmId, userId, email]);
}

/** The other users of the organization (deactivated ones included) whose API or delivery email is `email`. */
export async function otherUsersWithEmail(db: Queryable, realmId: number, userId: number, email: string): Promise<Array<{ id: number; isActive: boolean }>> {
  const { rows } = await db.query(
    "SELECT id, is_active FROM users WHERE realm_id = $1 AND id <> $2 AND (lower(email) = lower($3) OR lower(delivery_email) = lower($3)) ORDER BY id",
    [realmId, userId, email],
  );
  return rows.map((r) => ({ id: Number(r.id), isActive: r.is_active }));
}
