import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { pack as tarPack, type Pack } from "tar-stream";
import { ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from "@chat/contracts";
import { ApiError, withTx } from "@chat/platform";
import type { AppDeps } from "../deps";
import { selectPublicAttachments, selectPublicChannels, selectPublicMessagesPage } from "../queries/realm-export-data";
import { emojiImageKey } from "../queries/realm-emoji";
import type { FileStorage } from "../storage";
import { selectRealmEmoji } from "../store/realm-emoji";
import {
  claimRealmExport,
  deferRealmExport,
  failRealmExport,
  finishRealmExport,
  releaseRealmExportClaim,
  renewRealmExportClaim,
  type RealmExportRow,
} from "../store/realm-exports";
import { announceRealmExports } from "./realm-exports";

/**
 * Makes the organizations' public data exports (POST /export/realm) in the background: one at a
 * time per process, any number of processes. A process claims the oldest waiting export, writes
 * its archive into the uploads' storage while renewing its lease, and records it. A build that
 * fails marks the export failed, as Zulip's, but one that another service or the database
 * interrupted is tried again a minute later; an export whose process died is claimed again once
 * the lease runs out; after three attempts in all it is given up as failed. Each change
 * reaches the administrator who asked as a `realm_export` event.
 */

/** Claims before an export is given up (its process died, or a service did not answer, each time). */
const MAX_ATTEMPTS = 3;
/** The wait before an export interrupted by a service that did not answer is tried again. */
const RETRY_AFTER_MS = 60_000;

/** PostgreSQL's connection and shutdown error classes, and the network's errors. */
const TRANSIENT_CODES = /^(08|57P0)|^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EAI_AGAIN|ENOTFOUND)$/;

/** A failure of another service or of the database rather than of the export itself. */
function isTransient(err: unknown): boolean {
  if (err instanceof ApiError) return err.status >= 500;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && TRANSIENT_CODES.test(code);
}
/** Messages per file of the archive (`messages-000001.json`, ...). */
const MESSAGES_PER_FILE = 1000;
const ARCHIVE_TYPE = "application/gzip";

/** Claims and makes one export; false when none was waiting (or `signal` stopped the one claimed). */
export async function makeNextExport(
  deps: AppDeps,
  storage: FileStorage,
  config: { EXPORT_LEASE_SECONDS: number },
  signal?: AbortSignal,
): Promise<boolean> {
  const now = deps.clock.now();
  const leaseMs = config.EXPORT_LEASE_SECONDS * 1000;
  const claimed = await claimRealmExport(deps.pool, now, new Date(now.getTime() - leaseMs));
  if (!claimed) return false;
  if (claimed.attempts > MAX_ATTEMPTS) {
    await settle(deps, claimed, (tx) => failRealmExport(tx, claimed.id, claimed.claimedAt!, deps.clock.now()));
    deps.log.warn({ exportId: claimed.id, realmId: claimed.realmId }, "realm export: given up after repeated attempts");
    return true;
  }
  const pathId = `exports/${claimed.realmId}/${randomBytes(18).toString("base64url")}/zulip-export-${randomBytes(6).toString("hex")}.tar.gz`;
  let claimedAt = claimed.claimedAt!;
  // Renewed as the archive grows; a lost lease stops the build (another process has it now).
  const renew = async () => {
    signal?.throwIfAborted();
    const renewed = await renewRealmExportClaim(deps.pool, claimed.id, claimedAt, deps.clock.now());
    if (!renewed) throw new Error("the export's claim was lost");
    claimedAt = renewed;
  };
  let size: number;
  try {
    const put = (body: Readable) => storage.put(pathId, body, { contentType: ARCHIVE_TYPE, maxBytes: Number.MAX_SAFE_INTEGER });
    ({ size } = await writeArchive(deps, storage, claimed.realmId, put, renew));
  } catch (err) {
    await storage.delete(pathId).catch(() => {});
    if (signal?.aborted) {
      await releaseRealmExportClaim(deps.pool, claimed.id, claimedAt);
      deps.log.info({ exportId: claimed.id, realmId: claimed.realmId }, "realm export: left to another process at shutdown");
      return false;
    }
    if (isTransient(err) && claimed.attempts < MAX_ATTEMPTS) {
      // Another service or the database did not answer: tried again in a minute, as a new attempt.
      const lapsesAt = new Date(deps.clock.now().getTime() + RETRY_AFTER_MS - leaseMs);
      await deferRealmExport(deps.pool, claimed.id, claimedAt, lapsesAt).catch(() => {});
      deps.log.warn({ err: (err as Error).message, exportId: claimed.id, realmId: claimed.realmId }, "realm export interrupted; will retry");
      return true;
    }
    // A build that failed is failed (as Zulip's); unless another process holds it by now.
    const failed = await settle(deps, claimed, (tx) => failRealmExport(tx, claimed.id, claimedAt, deps.clock.now()));
    deps.log.warn({ err: (err as Error).message, exportId: claimed.id, realmId: claimed.realmId, failed: failed !== null }, "realm export failed");
    return true;
  }
  const finished = await settle(deps, claimed, (tx) => finishRealmExport(tx, claimed.id, claimedAt, pathId, size, deps.clock.now()));
  if (!finished) await storage.delete(pathId).catch(() => {});
  else deps.log.info({ exportId: claimed.id, realmId: claimed.realmId, bytes: size }, "realm export made");
  return true;
}

/** Records the outcome and tells the administrator who asked, in one transaction; null when the row had moved on. */
async function settle(deps: AppDeps, row: RealmExportRow, change: (tx: Parameters<Parameters<typeof withTx>[1]>[0]) => Promise<RealmExportRow | null>) {
  return withTx(deps.pool, async (tx) => {
    const changed = await change(tx);
    if (changed) await announceRealmExports(deps, tx, row.realmId, row.id, row.actingUserId);
    return changed;
  });
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value, null, 1));

function bufferEntry(pack: Pack, name: string, body: Buffer, mtime: Date): Promise<void> {
  return new Promise((resolve, reject) => pack.entry({ name, mtime }, body, (err) => (err ? reject(err) : resolve())));
}

function streamEntry(pack: Pack, name: string, size: number, body: Readable, mtime: Date): Promise<void> {
  return new Promise((resolve, reject) => {
    const entry = pack.entry({ name, size, mtime }, (err) => (err ? reject(err) : resolve()));
    pipeline(body, entry).catch(reject);
  });
}

/**
 * The archive (`zulip-export-*.tar.gz`): `realm.json` (the organization, its users, groups,
 * linkifiers, custom emoji and public channels), `messages-NNNNNN.json` (the public channels'
 * messages with reactions and submessages, oldest first), `attachments.json` with the files
 * under `uploads/`, and the emoji images under `emoji/`. Streams into `sink` (the storage, or an
 * operator's download) as it is made; resolves with what the sink resolves with.
 */
export async function writeArchive<T>(deps: AppDeps, storage: FileStorage, realmId: number, sink: (body: Readable) => Promise<T>, renew: () => Promise<void> = async () => {}): Promise<T> {
  const pack = tarPack();
  const gzip = createGzip();
  pack.on("error", (err: Error) => gzip.destroy(err));
  pack.pipe(gzip);
  const stored = sink(gzip);
  // A failed sink (storage down, a download cut) must not leave an entry waiting forever to drain.
  const putFailed = stored.then(() => new Promise<never>(() => {}));
  putFailed.catch(() => {});
  const addBuffer = (name: string, body: Buffer, mtime: Date) => Promise.race([bufferEntry(pack, name, body, mtime), putFailed]);
  const addStream = (name: string, size: number, body: Readable, mtime: Date) => Promise.race([streamEntry(pack, name, size, body, mtime), putFailed]);
  try {
    const now = deps.clock.now();
    const [realm, users, groups, linkifiers, emoji, channels] = await Promise.all([
      deps.accounts.getRealm(realmId),
      deps.accounts.getAllUsers(realmId),
      deps.accounts.getUserGroups(realmId),
      deps.accounts.getLinkifiers(realmId),
      selectRealmEmoji(deps.pool, realmId),
      selectPublicChannels(deps.pool, realmId),
    ]);
    const userGroups = [];
    for (const g of groups.filter((g) => !g.is_system_group)) userGroups.push({ ...g, members: await deps.accounts.groupMembers(realmId, g.id) });
    const summary = {
      export_type: "public",
      exported_at: Math.floor(now.getTime() / 1000),
      server: { zulip_version: ZULIP_VERSION, zulip_feature_level: ZULIP_FEATURE_LEVEL },
      realm: { id: realm.id, name: realm.name, string_id: realm.string_id, date_created: realm.date_created, settings: realm.settings },
      // The API's email (the real one only where everyone may see it), never the delivery email.
      users: users.map((u) => ({
        user_id: u.user_id,
        full_name: u.full_name,
        email: u.email,
        role: u.role,
        is_active: u.is_active,
        is_bot: u.is_bot,
        bot_type: u.bot_type,
        bot_owner_id: u.bot_owner_id,
        date_joined: u.date_joined,
        timezone: u.timezone,
      })),
      user_groups: userGroups,
      linkifiers,
      custom_emoji: emoji.map((e) => ({ id: e.id, name: e.name, author_id: e.authorId, file_name: e.fileName, is_animated: e.isAnimated, deactivated: e.deactivated })),
      channels,
    };
    await addBuffer("realm.json", json(summary), now);
    for (const e of emoji) {
      const file = await storage.get(emojiImageKey(realmId, e.fileName));
      if (file) await addStream(`emoji/${e.fileName}`, file.size, file.stream, now);
    }
    let afterId = 0;
    for (let part = 1; ; part++) {
      const messages = await selectPublicMessagesPage(deps.pool, realmId, afterId, MESSAGES_PER_FILE);
      if (!messages.length) break;
      await addBuffer(`messages-${String(part).padStart(6, "0")}.json`, json({ messages }), now);
      afterId = messages[messages.length - 1].id;
      await renew();
    }
    const attachments = await selectPublicAttachments(deps.pool, realmId);
    const kept = [];
    for (const a of attachments) {
      const file = await storage.get(a.path_id);
      // A file already gone from storage (deleted meanwhile) is listed without its bytes.
      if (file) await addStream(`uploads/${a.path_id}`, file.size, file.stream, now);
      kept.push({ ...a, included: file !== null });
      await renew();
    }
    await addBuffer("attachments.json", json({ attachments: kept }), now);
    pack.finalize();
  } catch (err) {
    pack.destroy(err as Error);
    await stored.catch(() => {});
    throw err;
  }
  return stored;
}
