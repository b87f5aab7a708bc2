import { MessagingRealmExportChanged, type InternalRealm, type RealmExport } from "@chat/contracts";
import { badRequest, emitEvent, organizationUrl, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { checkAdministrator } from "../lib/permissions";
import { publicExportSize } from "../queries/realm-export-data";
import type { FileStorage } from "../storage";
import {
  countRealmExportsSince,
  insertRealmExport,
  lockRealmExport,
  markRealmExportDeleted,
  selectDownloadableExport,
  selectRealmExports,
  type RealmExportRow,
} from "../store/realm-exports";

/** Zulip's limits on exports asked for through the API (zerver/views/realm_export.py). */
const EXPORTS_PER_WEEK = 5;
const WEEK_MS = 7 * 86_400_000;
const MAX_MESSAGES = 250_000;
const MAX_UPLOAD_BYTES = 10 * 1024 ** 3;

const seconds = (d: Date | null) => (d === null ? null : d.getTime() / 1000);

/** An export as the API shows it; the URL is on the organization's host. */
export function realmExportObject(deps: AppDeps, realm: Pick<InternalRealm, "string_id">, row: RealmExportRow): RealmExport {
  const available = row.finishedAt !== null && row.deletedAt === null && row.pathId !== null;
  return {
    id: row.id,
    acting_user_id: row.actingUserId,
    export_time: seconds(row.requestedAt)!,
    deleted_timestamp: seconds(row.deletedAt),
    failed_timestamp: seconds(row.failedAt),
    export_url: available ? `${organizationUrl(deps.config, realm.string_id)}/user_avatars/${row.pathId}` : null,
    pending: row.finishedAt === null && row.failedAt === null && row.deletedAt === null,
  };
}

/** GET /export/realm: administrators only. */
export async function getRealmExports(deps: AppDeps, who: Identity): Promise<RealmExport[]> {
  checkAdministrator(who.role);
  const [realm, rows] = await Promise.all([deps.accounts.getRealm(who.realmId), selectRealmExports(deps.pool, who.realmId)]);
  return rows.map((r) => realmExportObject(deps, realm, r));
}

/** The file behind an export URL's path (`exports/<realm>/<token>/<name>`), while the export is made and not deleted; else null. */
export async function openRealmExport(deps: AppDeps, storage: FileStorage, realmIdStr: string, token: string, filename: string) {
  if (!/^[1-9][0-9]{0,15}$/.test(realmIdStr)) return null;
  const pathId = `exports/${realmIdStr}/${token}/${filename}`;
  const row = await selectDownloadableExport(deps.pool, Number(realmIdStr), pathId);
  return row ? storage.get(pathId) : null;
}

/** Every export of the organization, to one administrator (Zulip's notify_realm_export). */
export async function announceRealmExports(deps: AppDeps, tx: Queryable, realmId: number, exportId: number, userId: number): Promise<void> {
  const [realm, rows] = await Promise.all([deps.accounts.getRealm(realmId), selectRealmExports(tx, realmId)]);
  const event = { type: "realm_export" as const, exports: rows.map((r) => realmExportObject(deps, realm, r)) };
  const payload = MessagingRealmExportChanged.parse({ export_id: exportId, client: { event, users: [userId] } });
  await emitEvent(tx, { type: "messaging.realm_export.changed", realmId, payload });
}

/**
 * POST /export/realm: a public data export, made in the background (jobs/realm-exports.ts).
 * Administrators only; at most five a week, counting failed and deleted ones; an organization
 * past Zulip's size limits for API exports is told to ask for a manual one.
 */
export async function doCreateRealmExport(deps: AppDeps, who: Identity): Promise<number> {
  checkAdministrator(who.role);
  const now = deps.clock.now();
  return withTx(deps.pool, async (tx) => {
    // One request at a time per organization, so two cannot both pass the weekly count.
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('messaging.realm_exports'), $1::int)", [who.realmId]);
    if ((await countRealmExportsSince(tx, who.realmId, new Date(now.getTime() - WEEK_MS))) >= EXPORTS_PER_WEEK) {
      throw badRequest("Exceeded rate limit.");
    }
    const size = await publicExportSize(tx, who.realmId);
    if (size.messages > MAX_MESSAGES || size.uploadBytes > MAX_UPLOAD_BYTES) {
      throw badRequest("Please request a manual export from your server's administrator.");
    }
    const row = await insertRealmExport(tx, who.realmId, who.userId, now);
    await announceRealmExports(deps, tx, who.realmId, row.id, who.userId);
    return row.id;
  });
}

/**
 * DELETE /export/realm/{id}: removes a made export's file (Zulip's delete_realm_export and its
 * errors); the export stays listed, with its deletion time.
 */
export async function doDeleteRealmExport(deps: AppDeps, storage: FileStorage, who: Identity, exportId: number): Promise<void> {
  checkAdministrator(who.role);
  const pathId = await withTx(deps.pool, async (tx) => {
    const row = await lockRealmExport(tx, who.realmId, exportId);
    if (!row) throw badRequest("Invalid data export ID");
    if (row.deletedAt) throw badRequest("Export already deleted");
    if (row.failedAt) throw badRequest("Export failed, nothing to delete");
    if (!row.finishedAt || !row.pathId) throw badRequest("Export still in progress");
    await markRealmExportDeleted(tx, row.id, deps.clock.now());
    // To the administrator who deleted it, whose list changed (Zulip's do_delete_realm_export).
    await announceRealmExports(deps, tx, who.realmId, row.id, who.userId);
    return row.pathId;
  });
  // After the commit: a failure here leaves a file nobody can reach (the download checks the row).
  await storage.delete(pathId).catch((err) => deps.log.warn({ err: (err as Error).message, pathId }, "realm export: file not deleted"));
}
