import type { Attachment } from "@chat/contracts";
import { ApiError, badRequest, isGuest, type Identity, type Queryable } from "@chat/platform";
import { selectById, selectByOwner, selectByPathId, selectMessageRefs, sumRealmUploadSize, type AttachmentMessageRef, type AttachmentRow } from "../store/attachments";

/**
 * A time as Zulip's attachment objects give it: whole seconds, times 1000. `date_sent` is then the
 * message's `timestamp` times 1000, which a client can match.
 */
const wholeSecondsMs = (t: Date) => Math.floor(t.getTime() / 1000) * 1000;

/** Client shape (GET /attachments, attachment events); times in milliseconds as Zulip sends them. */
export function formatAttachment(row: AttachmentRow, refs: AttachmentMessageRef[]): Attachment {
  return {
    id: row.id,
    name: row.fileName,
    path_id: row.pathId,
    size: row.size,
    create_time: wholeSecondsMs(row.createTime),
    messages: refs.filter((r) => r.attachmentId === row.id).map((r) => ({ id: r.messageId, date_sent: wholeSecondsMs(r.dateSent) })),
  };
}

export async function getFormattedAttachment(db: Queryable, row: AttachmentRow): Promise<Attachment> {
  return formatAttachment(row, await selectMessageRefs(db, row.realmId, [row.id]));
}

/** GET /attachments: the caller's uploads with the messages linking them, and the realm's usage. */
export async function getAttachments(db: Queryable, who: Identity): Promise<{ attachments: Attachment[]; upload_space_used: number }> {
  const rows = await selectByOwner(db, who.realmId, who.userId);
  const refs = await selectMessageRefs(db, who.realmId, rows.map((r) => r.id));
  return { attachments: rows.map((r) => formatAttachment(r, refs)), upload_space_used: await sumRealmUploadSize(db, who.realmId) };
}

/** One of the caller's own uploads (for deletion); anything else is "Invalid attachment". */
export async function accessOwnAttachment(db: Queryable, who: Identity, id: number, lock = false): Promise<AttachmentRow> {
  const row = await selectById(db, who.realmId, id, lock);
  if (!row || row.ownerId !== who.userId) throw badRequest("Invalid attachment");
  return row;
}

/**
 * Whether `who` may see an upload through a message that links it: they received one of those
 * messages, or one was sent to a channel whose history they can read (a public channel for
 * anyone but guests; a channel with shared history for its subscribers). Zulip's rules.
 */
export async function canSeeThroughMessages(
  db: Queryable,
  who: { realmId: number; userId: number; guest: boolean },
  attachmentId: number,
): Promise<boolean> {
  // Each linking message, its channel and the subscription are looked up by key, as scalar
  // subqueries with the organization checked in their results: written as joins and EXISTS, a
  // plan made on small tables walked the organization's messages by (realm_id, sender_id, id) and
  // hashed all of the viewer's rows, for an upload linked from one message (plans.test.ts).
  const { rows } = await db.query(
    `SELECT EXISTS (
       SELECT 1 FROM attachment_messages am
        WHERE am.attachment_id = $3 AND am.realm_id = $1 AND (
          (SELECT true FROM usermessages um WHERE um.user_id = $2 AND um.message_id = am.message_id)
          OR (SELECT m.realm_id = $1 AND (
                SELECT s.realm_id = $1 AND (
                  (NOT s.invite_only AND NOT $4)
                  OR (s.history_public_to_subscribers
                      AND (SELECT sub.active FROM subscriptions sub WHERE sub.user_id = $2 AND sub.stream_id = s.id)))
                  FROM streams s WHERE s.id = m.stream_id)
                FROM messages m WHERE m.id = am.message_id))
     ) AS ok`,
    [who.realmId, who.userId, attachmentId, who.guest],
  );
  return rows[0].ok === true;
}

const notFound = () => new ApiError("BAD_REQUEST", "File not found", { status: 404 });

/**
 * An upload the caller may download: their own, or one they can see through a message. A file
 * of another organization, a missing one and an inaccessible one all answer the same 404.
 */
export async function accessAttachmentForDownload(db: Queryable, who: Identity, realmIdStr: string, pathId: string): Promise<AttachmentRow> {
  if (realmIdStr !== String(who.realmId)) throw notFound();
  const row = await selectByPathId(db, who.realmId, pathId);
  if (!row) throw notFound();
  if (row.ownerId === who.userId || (await canSeeThroughMessages(db, { ...who, guest: isGuest(who) }, row.id))) return row;
  throw notFound();
}

/**
 * The upload a temporary URL's token named (`pathId`, null when the token did not check out): it
 * must still exist, in the realm its path id starts with, under the file name in the URL.
 */
export async function accessAttachmentByToken(db: Queryable, pathId: string | null, fileName: string): Promise<AttachmentRow> {
  const realmId = pathId ? Number(pathId.split("/", 1)[0]) : NaN;
  const row = pathId && Number.isSafeInteger(realmId) && pathId.endsWith(`/${fileName}`) ? await selectByPathId(db, realmId, pathId) : null;
  if (!row) throw new ApiError("BAD_REQUEST", "Invalid token", { status: 404 });
  return row;
}
