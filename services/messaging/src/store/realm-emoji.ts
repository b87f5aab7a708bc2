import type { Queryable } from "@chat/platform";

export interface RealmEmojiRow {
  id: number;
  realmId: number;
  name: string;
  authorId: number | null;
  /** `<id>.<ext>`: the image's name in storage and in its URL. */
  fileName: string;
  contentType: string;
  isAnimated: boolean;
  deactivated: boolean;
}

const COLUMNS = "id, realm_id, name, author_id, file_name, content_type, is_animated, deactivated";

function toRealmEmoji(r: any): RealmEmojiRow {
  return {
    id: Number(r.id),
    realmId: Number(r.realm_id),
    name: r.name,
    authorId: r.author_id === null ? null : Number(r.author_id),
    fileName: r.file_name,
    contentType: r.content_type,
    isAnimated: r.is_animated,
    deactivated: r.deactivated,
  };
}

/** Every custom emoji of the realm, deactivated ones included, oldest first. */
export async function selectRealmEmoji(db: Queryable, realmId: number): Promise<RealmEmojiRow[]> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM realm_emoji WHERE realm_id = $1 ORDER BY id`, [realmId]);
  return rows.map(toRealmEmoji);
}

/** The realm's active custom emoji among `names`. */
export async function selectActiveRealmEmojiByNames(db: Queryable, realmId: number, names: string[]): Promise<RealmEmojiRow[]> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM realm_emoji WHERE realm_id = $1 AND name = ANY($2::text[]) AND NOT deactivated`, [realmId, names]);
  return rows.map(toRealmEmoji);
}

export async function selectActiveRealmEmojiByName(db: Queryable, realmId: number, name: string): Promise<RealmEmojiRow | null> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM realm_emoji WHERE realm_id = $1 AND name = $2 AND NOT deactivated`, [realmId, name]);
  return rows.length > 0 ? toRealmEmoji(rows[0]) : null;
}

export async function selectRealmEmojiById(db: Queryable, realmId: number, id: number): Promise<RealmEmojiRow | null> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM realm_emoji WHERE realm_id = $1 AND id = $2`, [realmId, id]);
  return rows.length > 0 ? toRealmEmoji(rows[0]) : null;
}

export async function selectRealmEmojiByFileName(db: Queryable, realmId: number, fileName: string): Promise<RealmEmojiRow | null> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM realm_emoji WHERE realm_id = $1 AND file_name = $2`, [realmId, fileName]);
  return rows.length > 0 ? toRealmEmoji(rows[0]) : null;
}

/**
 * Serializes the realm's custom emoji changes (two uploads of one name, and the order of their
 * events): a transaction-scoped advisory lock keyed by the realm.
 */
export async function lockRealmEmoji(db: Queryable, realmId: number): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('realm_emoji'), $1::int)", [realmId]);
}

/**
 * A new active emoji; its file name is its id, a random token (the images are public, as
 * avatars are: the name must not be guessable) and the extension given.
 */
export async function insertRealmEmoji(
  db: Queryable,
  e: { realmId: number; name: string; authorId: number; token: string; extension: string; contentType: string; isAnimated: boolean; dateCreated: Date },
): Promise<RealmEmojiRow> {
  const { rows } = await db.query(
    `WITH next AS (SELECT nextval(pg_get_serial_sequence('realm_emoji', 'id')) AS id)
     INSERT INTO realm_emoji (id, realm_id, name, author_id, file_name, content_type, is_animated, date_created)
     SELECT id, $1, $2, $3, id || '-' || $8 || $4, $5, $6, $7 FROM next
     RETURNING ${COLUMNS}`,
    [e.realmId, e.name, e.authorId, e.extension, e.contentType, e.isAnimated, e.dateCreated, e.token],
  );
  return toRealmEmoji(rows[0]);
}

export async function deactivateRealmEmoji(db: Queryable, realmId: number, id: number): Promise<void> {
  await db.query("UPDATE realm_emoji SET deactivated = true WHERE realm_id = $1 AND id = $2", [realmId, id]);
}
