import type { Queryable } from "@chat/platform";

export interface MuteRow {
  mutedUserId: number;
  dateMuted: Date;
}

/** The users one user has muted, in the order they were muted. */
export async function listMutes(db: Queryable, realmId: number, userId: number): Promise<MuteRow[]> {
  const { rows } = await db.query(
    "SELECT muted_user_id, date_muted FROM muted_users WHERE realm_id = $1 AND user_id = $2 ORDER BY id",
    [realmId, userId],
  );
  return rows.map((r) => ({ mutedUserId: Number(r.muted_user_id), dateMuted: r.date_muted }));
}

export async function hasMute(db: Queryable, realmId: number, userId: number, mutedUserId: number): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM muted_users WHERE realm_id = $1 AND user_id = $2 AND muted_user_id = $3", [
    realmId,
    userId,
    mutedUserId,
  ]);
  return (rowCount ?? 0) > 0;
}

export async function insertMute(db: Queryable, realmId: number, userId: number, mutedUserId: number, dateMuted: Date): Promise<void> {
  await db.query("INSERT INTO muted_users (realm_id, user_id, muted_user_id, date_muted) VALUES ($1, $2, $3, $4)", [
    realmId,
    userId,
    mutedUserId,
    dateMuted,
  ]);
}

/** Returns whether there was such a mute. */
export async function deleteMute(db: Queryable, realmId: number, userId: number, mutedUserId: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM muted_users WHERE realm_id = $1 AND user_id = $2 AND muted_user_id = $3", [
    realmId,
    userId,
    mutedUserId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Serializes changes of one user's list (the version order must match the commit order). */
export async function lockMutesOwner(db: Queryable, realmId: number, userId: number): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM users WHERE realm_id = $1 AND id = $2 FOR NO KEY UPDATE", [realmId, userId]);
  return (rowCount ?? 0) > 0;
}

export async function nextMutedUsersVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query("SELECT nextval('muted_users_version') AS v");
  return Number(rows[0].v);
}
