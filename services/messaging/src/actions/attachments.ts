import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import { linkedPathIds } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Clock, type Identity, type Logger, type Pool, type Queryable } from "@chat/platform";
import type { MessageHooks, SentMessageInfo } from "../deps";
import { accessOwnAttachment, canSeeThroughMessages, formatAttachment, getFormattedAttachment } from "../queries/attachments";
import { sanitizeFileName, uploadContentType } from "../lib/upload-names";
import type { FileStorage } from "../storage";
import {
  deleteAttachmentRow,
  deleteFileDeletion,
  deleteIfUnlinked,
  deleteMessageRefs,
  deleteMessageRefsTo,
  insertAttachment,
  insertFileDeletions,
  insertMessageRefs,
  lockExpiredUnlinked,
  lockUnlinked,
  selectByIds,
  selectByPathIdsForShare,
  selectFileDeletions,
  selectMessageAttachments,
  selectSenderIsGuest,
  sumRealmUploadSize,
  type AttachmentRow,
} from "../store/attachments";

export interface AttachmentsDeps {
  pool: Pool;
  clock: Clock;
  log: Logger;
  storage: FileStorage;
  maxUploadBytes: number;
}

/** Bytes in storage that no row points to yet (between the upload and its transaction). */
export interface StagedUpload {
  pathId: string;
  /** The name the upload is shown by (not the cleaned one its path id ends in). */
  fileName: string;
  contentType: string;
  size: number;
}

export const tooLarge = (maxBytes: number) =>
  badRequest(`Uploaded file is larger than the allowed limit of ${Number((maxBytes / 1024 / 1024).toPrecision(3))} MiB`);

/**
 * Streams one uploaded file into storage under a fresh, unguessable path id. `fileName` is the
 * upload's name (see uploadedFileName); the path id ends in its cleaned form.
 */
export async function storeUploadedFile(
  deps: AttachmentsDeps,
  who: Identity,
  file: { stream: Readable; fileName: string; mimetype: string },
): Promise<StagedUpload> {
  const { fileName } = file;
  const pathId = [who.realmId, randomBytes(1).toString("hex"), randomBytes(18).toString("base64url"), sanitizeFileName(fileName)].join("/");
  const contentType = uploadContentType(file.mimetype, fileName);
  const { size } = await deps.storage.put(pathId, file.stream, { contentType, maxBytes: deps.maxUploadBytes });
  return { pathId, fileName, contentType, size };
}

export async function discardStagedUpload(deps: AttachmentsDeps, staged: StagedUpload): Promise<void> {
  await deps.storage.delete(staged.pathId).catch((err) => deps.log.warn({ err: (err as Error).message, pathId: staged.pathId }, "could not remove upload"));
}

/** POST /user_uploads, after the bytes are stored: the row and the owner's `attachment/add`. */
export async function doCreateAttachment(deps: AttachmentsDeps, who: Identity, staged: StagedUpload): Promise<AttachmentRow> {
  try {
    return await withTx(deps.pool, async (tx) => {
      const row = await insertAttachment(tx, {
        realmId: who.realmId,
        ownerId: who.userId,
        pathId: staged.pathId,
        fileName: staged.fileName,
        contentType: staged.contentType,
        size: staged.size,
        createTime: deps.clock.now(),
      });
      await emitEvent(tx, {
        type: "messaging.attachment.uploaded",
        realmId: row.realmId,
        payload: {
          attachment_id: row.id,
          owner_id: row.ownerId,
          client: {
            event: { type: "attachment", op: "add", attachment: formatAttachment(row, []), upload_space_used: await sumRealmUploadSize(tx, row.realmId) },
            users: [row.ownerId],
          },
        },
      });
      return row;
    });
  } catch (err) {
    await discardStagedUpload(deps, staged);
    throw err;
  }
}

async function notifyRemoved(tx: Queryable, rows: AttachmentRow[], reason: "owner" | "unreferenced" | "unclaimed"): Promise<void> {
  const usage = new Map<number, number>();
  for (const row of rows) {
    if (!usage.has(row.realmId)) usage.set(row.realmId, await sumRealmUploadSize(tx, row.realmId));
    await emitEvent(tx, {
      type: "messaging.attachment.deleted",
      realmId: row.realmId,
      payload: {
        attachment_id: row.id,
        owner_id: row.ownerId,
        reason,
        client: {
          event: { type: "attachment", op: "remove", attachment: { id: row.id }, upload_space_used: usage.get(row.realmId) },
          users: [row.ownerId],
        },
      },
    });
  }
}

async function notifyUpdated(tx: Queryable, rows: AttachmentRow[]): Promise<void> {
  for (const row of rows) {
    await emitEvent(tx, {
      type: "messaging.attachment.updated",
      realmId: row.realmId,
      payload: {
        attachment_id: row.id,
        owner_id: row.ownerId,
        client: {
          event: { type: "attachment", op: "update", attachment: await getFormattedAttachment(tx, row), upload_space_used: await sumRealmUploadSize(tx, row.realmId) },
          users: [row.ownerId],
        },
      },
    });
  }
}

/** DELETE /attachments/{id}: the owner removes an upload; links in messages stop working. */
export async function doDeleteAttachment(deps: AttachmentsDeps, who: Identity, id: number, reaper: FileReaper): Promise<void> {
  await withTx(deps.pool, async (tx) => {
    const row = await accessOwnAttachment(tx, who, id, true);
    await deleteAttachmentRow(tx, row.realmId, row.id);
    await insertFileDeletions(tx, [row]);
    await notifyRemoved(tx, [row], "owner");
  });
  await reaper.drain();
}

/**
 * In the sending transaction: the message claims the uploads it links, if the sender may share
 * them (their own, or ones they can see through another message). Owners' clients get an update.
 */
/** Uploads of the organization the content links (only those a message can claim). */
function claimablePathIds(realmId: number, content: string): string[] {
  return linkedPathIds(content).filter((p) => p.startsWith(`${realmId}/`));
}

export async function claimAttachments(tx: Queryable, message: SentMessageInfo, alreadyLinked: Set<string> = new Set()): Promise<number[]> {
  const pathIds = claimablePathIds(message.realmId, message.content).filter((p) => !alreadyLinked.has(p));
  if (pathIds.length === 0) return [];
  const found = await selectByPathIdsForShare(tx, message.realmId, pathIds);
  const claimable: AttachmentRow[] = [];
  for (const row of found) {
    if (row.ownerId === message.senderId) {
      claimable.push(row);
      continue;
    }
    const sender = { realmId: message.realmId, userId: message.senderId, guest: await selectSenderIsGuest(tx, message.realmId, message.senderId) };
    if (await canSeeThroughMessages(tx, sender, row.id)) claimable.push(row);
  }
  if (claimable.length === 0) return [];
  await insertMessageRefs(tx, message.realmId, message.id, message.dateSent, claimable.map((r) => r.id));
  await notifyUpdated(tx, claimable);
  return claimable.map((r) => r.id);
}

/**
 * In the editing transaction: the message claims the uploads its new content links (as a send
 * does) and drops its links to those the content no longer names. Those uploads stay, as in
 * Zulip: the message's edit history may still show them.
 */
export async function reclaimAttachments(tx: Queryable, message: SentMessageInfo): Promise<void> {
  const named = new Set(claimablePathIds(message.realmId, message.content));
  const linked = await selectMessageAttachments(tx, message.realmId, message.id);
  await deleteMessageRefsTo(tx, message.realmId, message.id, linked.filter((a) => !named.has(a.pathId)).map((a) => a.id));
  await claimAttachments(tx, message, new Set(linked.map((a) => a.pathId)));
}

/**
 * In the deleting transaction: drop the deleted messages' links; an upload no message links any
 * more is deleted (its file once the transaction committed), the others' owners get an update.
 */
export async function releaseAttachments(tx: Queryable, realmId: number, messageIds: number[]): Promise<number[]> {
  if (messageIds.length === 0) return [];
  const touched = await deleteMessageRefs(tx, realmId, messageIds);
  if (touched.length === 0) return [];
  const unlinked = await lockUnlinked(tx, realmId, touched);
  const deleted = await deleteIfUnlinked(tx, realmId, unlinked.map((r) => r.id));
  await insertFileDeletions(tx, deleted);
  await notifyRemoved(tx, deleted, "unreferenced");
  const gone = new Set(deleted.map((r) => r.id));
  await notifyUpdated(tx, await selectByIds(tx, realmId, touched.filter((id) => !gone.has(id))));
  return deleted.map((r) => r.id);
}

/**
 * Deletes uploads never linked from a live message that were uploaded before `cutoff` (run by the
 * scheduler's timer), but for the path ids in `keep` (pending scheduled messages link them), then
 * removes pending files. Several replicas may run it at once.
 */
export async function doCleanUpAttachments(deps: AttachmentsDeps, reaper: FileReaper, cutoff: Date, limit: number, keep: string[] = []) {
  const deleted = await withTx(deps.pool, async (tx) => {
    const candidates = await lockExpiredUnlinked(tx, cutoff, limit, keep);
    const byRealm = new Map<number, number[]>();
    for (const c of candidates) byRealm.set(c.realmId, [...(byRealm.get(c.realmId) ?? []), c.id]);
    const rows: AttachmentRow[] = [];
    for (const [realmId, ids] of byRealm) rows.push(...(await deleteIfUnlinked(tx, realmId, ids)));
    await insertFileDeletions(tx, rows);
    await notifyRemoved(tx, rows, "unclaimed");
    return rows;
  });
  const filesRemoved = await reaper.drain();
  return { deleted: deleted.length, files_removed: filesRemoved };
}

/**
 * Removes files whose rows are gone. Deletions are recorded in the deleting transaction; this
 * runs after commit (right after an action, shortly after a message deletion hook, and on every
 * clean-up), so nothing is lost if the process dies in between.
 */
export class FileReaper {
  private timers = new Set<NodeJS.Timeout>();
  private running: Promise<number> | null = null;

  constructor(private readonly deps: Pick<AttachmentsDeps, "pool" | "storage" | "log">) {}

  /** Drains soon: the deleting transaction is still open when a hook calls this. */
  kick(): void {
    for (const ms of [200, 2000]) {
      const t = setTimeout(() => {
        this.timers.delete(t);
        void this.drain().catch(() => {});
      }, ms);
      t.unref();
      this.timers.add(t);
    }
  }

  async drain(): Promise<number> {
    while (this.running) await this.running.catch(() => 0);
    this.running = this.drainOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async drainOnce(): Promise<number> {
    let removed = 0;
    for (;;) {
      const paths = await selectFileDeletions(this.deps.pool, 100);
      for (const pathId of paths) {
        try {
          await this.deps.storage.delete(pathId);
          await deleteFileDeletion(this.deps.pool, pathId);
          removed++;
        } catch (err) {
          this.deps.log.warn({ err: (err as Error).message, pathId }, "file removal failed; will retry");
          return removed;
        }
      }
      if (paths.length < 100) return removed;
    }
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

/** The hooks messaging's send and delete actions call inside their transactions. */
export function attachmentHooks(reaper: FileReaper): Required<MessageHooks> {
  return {
    async onMessageSent(tx, message) {
      await claimAttachments(tx, message);
    },
    sendNeedsHook(realmId, content) {
      return claimablePathIds(realmId, content).length > 0;
    },
    async onMessageEdited(tx, message) {
      await reclaimAttachments(tx, message);
    },
    async onMessagesDeleted(tx, realmId, messageIds) {
      const deleted = await releaseAttachments(tx, realmId, messageIds);
      if (deleted.length) reaper.kick();
    },
  };
}
