import type { Queryable } from "@chat/platform";

export interface AttachmentRow {
  id: number;
  realmId: number;
  ownerId: number;
  pathId: string;
  fileName: string;
  contentType: string;
  size: number;
  createTime: Date;
}

export interface AttachmentMessageRef {
  attachmentId: number;
  messageId: number;
  dateSent: Date;
}

const COLUMNS = "a.id, a.realm_id, a.owner_id, a.path_id, a.file_name, a.content_type, a.size, a.create_time";

function toRow(r: any): AttachmentRow {
  return {
    id: Number(r.id),
    realmId: Number(r.realm_id),
    ownerId: Number(r.owner_id),
    pathId: r.path_id,
    fileName: r.file_name,
    contentType: r.content_type,
    size: Number(r.size),
    createTime: new Date(r.create_time),
  };
}

/** A link counts only while its message still exists. */
const LIVE_LINK = `EXISTS (SELECT 1 FROM attachment_messages am JOIN messages m ON m.id = am.message_id
  WHERE am.attachment_id = a.id)`;

export async function insertAttachment(db: Queryable, a: Omit<AttachmentRow, "id">): Promise<AttachmentRow> {
  const { rows } = await db.query(
    `INSERT INTO attachments AS a (realm_id, owner_id, path_id, file_name, content_type, size, create_time)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [a.realmId, a.ownerId, a.pathId, a.fileName, a.contentType, a.size, a.createTime],
  );
  return toRow(rows[0]);
}

export async function selectByOwner(db: Queryable, realmId: number, ownerId: number): Promise<AttachmentRow[]> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM attachments a WHERE a.realm_id = $1 AND a.owner_id = $2 ORDER BY a.id`, [realmId, ownerId]);
  return rows.map(toRow);
}

export async function selectById(db: Queryable, realmId: number, id: number, lock = false): Promise<AttachmentRow | null> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM attachments a WHERE a.realm_id = $1 AND a.id = $2 ${lock ? "FOR UPDATE" : ""}`,
    [realmId, id],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

export async function selectByIds(db: Queryable, realmId: number, ids: number[]): Promise<AttachmentRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM attachments a WHERE a.realm_id = $1 AND a.id = ANY($2::bigint[]) ORDER BY a.id`, [realmId, ids]);
  return rows.map(toRow);
}

export async function selectByPathId(db: Queryable, realmId: number, pathId: string): Promise<AttachmentRow | null> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM attachments a WHERE a.realm_id = $1 AND a.path_id = $2`, [realmId, pathId]);
  return rows[0] ? toRow(rows[0]) : null;
}

/** Locks the rows against deletion until the transaction ends (a claim in progress). */
export async function selectByPathIdsForShare(db: Queryable, realmId: number, pathIds: string[]): Promise<AttachmentRow[]> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM attachments a WHERE a.realm_id = $1 AND a.path_id = ANY($2::text[]) ORDER BY a.id FOR SHARE`,
    [realmId, pathIds],
  );
  return rows.map(toRow);
}

export async function selectMessageRefs(db: Queryable, realmId: number, attachmentIds: number[]): Promise<AttachmentMessageRef[]> {
  if (attachmentIds.length === 0) return [];
  const { rows } = await db.query(
    `SELECT am.attachment_id, am.message_id, am.date_sent FROM attachment_messages am
       JOIN messages m ON m.id = am.message_id
      WHERE am.realm_id = $1 AND am.attachment_id = ANY($2::bigint[])
      ORDER BY am.message_id`,
    [realmId, attachmentIds],
  );
  return rows.map((r) => ({ attachmentId: Number(r.attachment_id), messageId: Number(r.message_id), dateSent: new Date(r.date_sent) }));
}

export async function insertMessageRefs(db: Queryable, realmId: number, messageId: number, dateSent: Date, attachmentIds: number[]): Promise<void> {
  await db.query(
    `INSERT INTO attachment_messages (realm_id, attachment_id, message_id, date_sent)
     SELECT $1, unnest($2::bigint[]), $3, $4 ON CONFLICT DO NOTHING`,
    [realmId, attachmentIds, messageId, dateSent],
  );
}

/** The uploads one message links: attachment id and path id. */
export async function selectMessageAttachments(db: Queryable, realmId: number, messageId: number): Promise<Array<{ id: number; pathId: string }>> {
  const { rows } = await db.query(
    `SELECT a.id, a.path_id FROM attachment_messages am JOIN attachments a ON a.id = am.attachment_id
      WHERE am.realm_id = $1 AND am.message_id = $2 ORDER BY a.id`,
    [realmId, messageId],
  );
  return rows.map((r) => ({ id: Number(r.id), pathId: r.path_id }));
}

/** Drops one message's links to these attachments. */
export async function deleteMessageRefsTo(db: Queryable, realmId: number, messageId: number, attachmentIds: number[]): Promise<void> {
  if (attachmentIds.length === 0) return;
  await db.query(
    "DELETE FROM attachment_messages WHERE realm_id = $1 AND message_id = $2 AND attachment_id = ANY($3::bigint[])",
    [realmId, messageId, attachmentIds],
  );
}

/** Drops the links of deleted messages; returns the attachments they pointed to. */
export async function deleteMessageRefs(db: Queryable, realmId: number, messageIds: number[]): Promise<number[]> {
  const { rows } = await db.query(
    "DELETE FROM attachment_messages WHERE realm_id = $1 AND message_id = ANY($2::bigint[]) RETURNING attachment_id",
    [realmId, messageIds],
  );
  return [...new Set(rows.map((r) => Number(r.attachment_id)))];
}

/** Of these attachments, the ones no live message links to any more, locked for deletion. */
export async function lockUnlinked(db: Queryable, realmId: number, ids: number[]): Promise<AttachmentRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM attachments a WHERE a.realm_id = $1 AND a.id = ANY($2::bigint[]) AND NOT ${LIVE_LINK}
      ORDER BY a.id FOR UPDATE`,
    [realmId, ids],
  );
  return rows.map(toRow);
}

/**
 * Candidates for the unused-upload clean-up, across organizations: uploaded before `cutoff` and
 * linked from no live message. Locked, skipping rows a claim holds.
 */
export async function lockExpiredUnlinked(db: Queryable, cutoff: Date, limit: number, keep: string[]): Promise<AttachmentRow[]> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM attachments a WHERE a.create_time < $1 AND NOT ${LIVE_LINK} AND a.path_id <> ALL($3::text[])
      ORDER BY a.id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [cutoff, limit, keep],
  );
  return rows.map(toRow);
}

/** Re-checked under the lock, in a new statement (a new snapshot): links committed meanwhile count. */
export async function deleteIfUnlinked(db: Queryable, realmId: number, ids: number[]): Promise<AttachmentRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query(
    `DELETE FROM attachments a WHERE a.realm_id = $1 AND a.id = ANY($2::bigint[]) AND NOT ${LIVE_LINK} RETURNING ${COLUMNS}`,
    [realmId, ids],
  );
  return rows.map(toRow);
}

export async function deleteAttachmentRow(db: Queryable, realmId: number, id: number): Promise<void> {
  await db.query("DELETE FROM attachments WHERE realm_id = $1 AND id = $2", [realmId, id]);
}

/** The organization's used upload space in bytes. */
export async function sumRealmUploadSize(db: Queryable, realmId: number): Promise<number> {
  const { rows } = await db.query("SELECT COALESCE(sum(size), 0)::bigint AS total FROM attachments WHERE realm_id = $1", [realmId]);
  return Number(rows[0].total);
}

export async function insertFileDeletions(db: Queryable, files: Array<{ realmId: number; pathId: string }>): Promise<void> {
  if (files.length === 0) return;
  await db.query(
    `INSERT INTO attachment_file_deletions (realm_id, path_id) SELECT unnest($1::bigint[]), unnest($2::text[]) ON CONFLICT DO NOTHING`,
    [files.map((f) => f.realmId), files.map((f) => f.pathId)],
  );
}

export async function selectFileDeletions(db: Queryable, limit: number): Promise<string[]> {
  const { rows } = await db.query("SELECT path_id FROM attachment_file_deletions ORDER BY requested_at LIMIT $1", [limit]);
  return rows.map((r) => r.path_id);
}

export async function deleteFileDeletion(db: Queryable, pathId: string): Promise<void> {
  await db.query("DELETE FROM attachment_file_deletions WHERE path_id = $1", [pathId]);
}

/** From messaging's user replica; an unknown sender counts as a guest (the narrowest access). */
export async function selectSenderIsGuest(db: Queryable, realmId: number, userId: number): Promise<boolean> {
  const { rows } = await db.query("SELECT role FROM users WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
  return rows.length === 0 || Number(rows[0].role) === 600;
}
