import type { Queryable } from "@chat/platform";

/** A user's presence row; the times are null until a client reported that state. */
export interface PresenceTimes {
  lastActive: Date | null;
  lastConnected: Date | null;
}

/** A presence row with what formatting it needs of its user. */
export interface PresenceRow extends PresenceTimes {
  userId: number;
  realmId: number;
  /** The API email (the legacy format's key). */
  email: string;
  dateJoined: Date;
  lastUpdateId: number;
}

/** The reporting user with their row (null times and update id 0 when they have none). */
export interface PresenceSubject extends PresenceRow {
  presenceEnabled: boolean;
  hasRow: boolean;
}

function toRow(r: any): PresenceRow {
  return {
    userId: Number(r.user_id),
    realmId: Number(r.realm_id),
    email: r.email,
    dateJoined: r.date_joined,
    lastActive: r.last_active_time,
    lastConnected: r.last_connected_time,
    lastUpdateId: Number(r.last_update_id ?? 0),
  };
}

export async function getPresenceSubject(db: Queryable, realmId: number, userId: number): Promise<PresenceSubject | null> {
  const { rows } = await db.query(
    `SELECT u.id AS user_id, u.realm_id, u.email, u.date_joined, u.presence_enabled,
            p.user_id IS NOT NULL AS has_row, p.last_active_time, p.last_connected_time, p.last_update_id
       FROM users u LEFT JOIN user_presence p ON p.user_id = u.id
      WHERE u.realm_id = $1 AND u.id = $2`,
    [realmId, userId],
  );
  return rows[0] ? { ...toRow(rows[0]), presenceEnabled: rows[0].presence_enabled, hasRow: rows[0].has_row } : null;
}

/** The row locked for update, or null when the user has none yet. */
export async function lockPresence(db: Queryable, realmId: number, userId: number): Promise<PresenceTimes | null> {
  const { rows } = await db.query(
    "SELECT last_active_time, last_connected_time FROM user_presence WHERE realm_id = $1 AND user_id = $2 FOR UPDATE",
    [realmId, userId],
  );
  return rows[0] ? { lastActive: rows[0].last_active_time, lastConnected: rows[0].last_connected_time } : null;
}

/**
 * The organization's next presence update id. The sequence row stays locked until the
 * transaction ends, so ids become visible in the order they were taken.
 */
export async function nextPresenceUpdateId(db: Queryable, realmId: number): Promise<number> {
  const { rows } = await db.query(
    `INSERT INTO presence_sequences (realm_id, last_update_id) VALUES ($1, 1)
     ON CONFLICT (realm_id) DO UPDATE SET last_update_id = presence_sequences.last_update_id + 1
     RETURNING last_update_id`,
    [realmId],
  );
  return Number(rows[0].last_update_id);
}

export async function savePresence(db: Queryable, realmId: number, userId: number, times: PresenceTimes, updateId: number): Promise<void> {
  await db.query(
    `INSERT INTO user_presence (user_id, realm_id, last_active_time, last_connected_time, last_update_id)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (user_id) DO UPDATE SET
       last_active_time = $3, last_connected_time = $4, last_update_id = $5`,
    [userId, realmId, times.lastActive, times.lastConnected, updateId],
  );
}

export async function deletePresence(db: Queryable, realmId: number, userId: number): Promise<void> {
  await db.query("DELETE FROM user_presence WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
}

/**
 * Presence rows of the organization's active human users: changed after `afterUpdateId`,
 * and/or connected since `connectedSince`, and/or among `userIds` (each filter only when given).
 */
export async function listRealmPresence(
  db: Queryable,
  realmId: number,
  filter: { afterUpdateId?: number; connectedSince?: Date; userIds?: number[] },
): Promise<PresenceRow[]> {
  // Only the filters given, so that each form is planned for its own index.
  const params: unknown[] = [realmId];
  let where = "";
  if (filter.userIds !== undefined) where += ` AND p.user_id = ANY($${params.push(filter.userIds)}::bigint[])`;
  if (filter.afterUpdateId !== undefined) where += ` AND p.last_update_id > $${params.push(filter.afterUpdateId)}`;
  if (filter.connectedSince !== undefined) where += ` AND p.last_connected_time >= $${params.push(filter.connectedSince)}`;
  const { rows } = await db.query(
    `SELECT p.user_id, p.realm_id, u.email, u.date_joined, p.last_active_time, p.last_connected_time, p.last_update_id
       FROM user_presence p JOIN users u ON u.id = p.user_id
      WHERE p.realm_id = $1 AND u.is_active AND NOT u.is_bot${where}
      ORDER BY p.user_id`,
    params,
  );
  return rows.map(toRow);
}

/** One user's row whatever their state (GET /users/{id}/presence), or null. */
export async function getUserPresence(db: Queryable, realmId: number, userId: number): Promise<PresenceRow | null> {
  const { rows } = await db.query(
    `SELECT p.user_id, p.realm_id, u.email, u.date_joined, p.last_active_time, p.last_connected_time, p.last_update_id
       FROM user_presence p JOIN users u ON u.id = p.user_id
      WHERE p.realm_id = $1 AND p.user_id = $2`,
    [realmId, userId],
  );
  return rows[0] ? toRow(rows[0]) : null;
}
