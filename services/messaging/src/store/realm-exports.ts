import type { Queryable } from "@chat/platform";

export interface RealmExportRow {
  id: number;
  realmId: number;
  actingUserId: number;
  requestedAt: Date;
  claimedAt: Date | null;
  attempts: number;
  finishedAt: Date | null;
  failedAt: Date | null;
  deletedAt: Date | null;
  pathId: string | null;
  size: number | null;
}

const toRow = (r: any): RealmExportRow => ({
  id: Number(r.id),
  realmId: Number(r.realm_id),
  actingUserId: Number(r.acting_user_id),
  requestedAt: r.requested_at,
  claimedAt: r.claimed_at,
  attempts: r.attempts,
  finishedAt: r.finished_at,
  failedAt: r.failed_at,
  deletedAt: r.deleted_at,
  pathId: r.path_id,
  size: r.size === null ? null : Number(r.size),
});

/** Not finished, failed or deleted: being made, or waiting for a process to make it. */
const OPEN = "finished_at IS NULL AND failed_at IS NULL AND deleted_at IS NULL";

export async function insertRealmExport(db: Queryable, realmId: number, actingUserId: number, now: Date): Promise<RealmExportRow> {
  const { rows } = await db.query("INSERT INTO realm_exports (realm_id, acting_user_id, requested_at) VALUES ($1, $2, $3) RETURNING *", [realmId, actingUserId, now]);
  return toRow(rows[0]);
}

/** The organization's exports, oldest first. */
export async function selectRealmExports(db: Queryable, realmId: number): Promise<RealmExportRow[]> {
  const { rows } = await db.query("SELECT * FROM realm_exports WHERE realm_id = $1 ORDER BY id", [realmId]);
  return rows.map(toRow);
}

/** Exports asked for since `since`, whatever became of them (Zulip's limit counts them all). */
export async function countRealmExportsSince(db: Queryable, realmId: number, since: Date): Promise<number> {
  const { rows } = await db.query("SELECT count(*)::int AS n FROM realm_exports WHERE realm_id = $1 AND requested_at >= $2", [realmId, since]);
  return rows[0].n;
}

export async function lockRealmExport(db: Queryable, realmId: number, id: number): Promise<RealmExportRow | null> {
  const { rows } = await db.query("SELECT * FROM realm_exports WHERE realm_id = $1 AND id = $2 FOR UPDATE", [realmId, id]);
  return rows[0] ? toRow(rows[0]) : null;
}

/**
 * Takes the oldest open export nobody holds (never claimed, or its holder's lease ran out before
 * `staleBefore`), counting the attempt. Concurrent processes skip each other's row.
 */
export async function claimRealmExport(db: Queryable, now: Date, staleBefore: Date): Promise<RealmExportRow | null> {
  const { rows } = await db.query(
    `UPDATE realm_exports SET claimed_at = $1, attempts = attempts + 1
      WHERE id = (SELECT id FROM realm_exports WHERE ${OPEN} AND (claimed_at IS NULL OR claimed_at < $2)
                   ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [now, staleBefore],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** Extends the lease of a claim still held (`claimedAt` as it was claimed); false when it was lost. */
export async function renewRealmExportClaim(db: Queryable, id: number, claimedAt: Date, now: Date): Promise<Date | null> {
  const { rows } = await db.query(`UPDATE realm_exports SET claimed_at = $3 WHERE id = $1 AND claimed_at = $2 AND ${OPEN} RETURNING claimed_at`, [id, claimedAt, now]);
  return rows[0]?.claimed_at ?? null;
}

/** Lets the claim lapse at `lapsesAt` (the next attempt after a moment), its attempt counted. */
export async function deferRealmExport(db: Queryable, id: number, claimedAt: Date, lapsesAt: Date): Promise<void> {
  await db.query(`UPDATE realm_exports SET claimed_at = $3 WHERE id = $1 AND claimed_at = $2 AND ${OPEN}`, [id, claimedAt, lapsesAt]);
}

/** Gives a claim back unused (the process is stopping): the next process starts it afresh. */
export async function releaseRealmExportClaim(db: Queryable, id: number, claimedAt: Date): Promise<void> {
  await db.query(`UPDATE realm_exports SET claimed_at = NULL, attempts = attempts - 1 WHERE id = $1 AND claimed_at = $2 AND ${OPEN}`, [id, claimedAt]);
}

/** Records the made file under the claim that made it; null when the claim was lost meanwhile. */
export async function finishRealmExport(db: Queryable, id: number, claimedAt: Date, pathId: string, size: number, now: Date): Promise<RealmExportRow | null> {
  const { rows } = await db.query(
    `UPDATE realm_exports SET finished_at = $5, path_id = $3, size = $4 WHERE id = $1 AND claimed_at = $2 AND ${OPEN} RETURNING *`,
    [id, claimedAt, pathId, size, now],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** Marks an export failed under the claim that tried it; null when that claim was lost meanwhile. */
export async function failRealmExport(db: Queryable, id: number, claimedAt: Date, now: Date): Promise<RealmExportRow | null> {
  const { rows } = await db.query(`UPDATE realm_exports SET failed_at = $3 WHERE id = $1 AND claimed_at = $2 AND ${OPEN} RETURNING *`, [id, claimedAt, now]);
  return rows[0] ? toRow(rows[0]) : null;
}

export async function markRealmExportDeleted(db: Queryable, id: number, now: Date): Promise<void> {
  await db.query("UPDATE realm_exports SET deleted_at = $2 WHERE id = $1", [id, now]);
}

/** The finished, not deleted export stored under `pathId` (the download's check). */
export async function selectDownloadableExport(db: Queryable, realmId: number, pathId: string): Promise<RealmExportRow | null> {
  const { rows } = await db.query("SELECT * FROM realm_exports WHERE realm_id = $1 AND path_id = $2 AND finished_at IS NOT NULL AND deleted_at IS NULL", [realmId, pathId]);
  return rows[0] ? toRow(rows[0]) : null;
}
