import type { ReactionType } from "@chat/contracts";
import type { Queryable } from "@chat/platform";

export interface ReactionRow {
  messageId: number;
  userId: number;
  emojiName: string;
  emojiCode: string;
  reactionType: ReactionType;
}

function toReaction(r: any): ReactionRow {
  return {
    messageId: Number(r.message_id),
    userId: Number(r.user_id),
    emojiName: r.emoji_name,
    emojiCode: r.emoji_code,
    reactionType: r.reaction_type,
  };
}

/** The reactions to these messages, in the order they were added: one statement for any number. */
export async function selectReactions(db: Queryable, realmId: number, messageIds: number[]): Promise<ReactionRow[]> {
  if (messageIds.length === 0) return [];
  const { rows } = await db.query(
    `SELECT message_id, user_id, emoji_name, emoji_code, reaction_type FROM reactions
      WHERE realm_id = $1 AND message_id = ANY($2::bigint[]) ORDER BY id`,
    [realmId, messageIds],
  );
  return rows.map(toReaction);
}

/** Someone's reaction to the message with this emoji (by code and type), if any. */
export async function selectReactionByCode(
  db: Queryable,
  realmId: number,
  messageId: number,
  emoji: { emojiCode: string; reactionType: string },
  userId?: number,
): Promise<ReactionRow | null> {
  const { rows } = await db.query(
    `SELECT message_id, user_id, emoji_name, emoji_code, reaction_type FROM reactions
      WHERE realm_id = $1 AND message_id = $2 AND emoji_code = $3 AND reaction_type = $4 AND ($5::bigint IS NULL OR user_id = $5)
      ORDER BY id LIMIT 1`,
    [realmId, messageId, emoji.emojiCode, emoji.reactionType, userId ?? null],
  );
  return rows.length > 0 ? toReaction(rows[0]) : null;
}

/** False when the user already reacted with that emoji (a concurrent request may have won). */
export async function insertReaction(db: Queryable, realmId: number, r: ReactionRow): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO reactions (realm_id, message_id, user_id, emoji_name, emoji_code, reaction_type)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [realmId, r.messageId, r.userId, r.emojiName, r.emojiCode, r.reactionType],
  );
  return rowCount === 1;
}

/** Deletes the user's reaction; returns it (with the name it was added under), or null. */
export async function deleteReaction(
  db: Queryable,
  realmId: number,
  messageId: number,
  userId: number,
  emoji: { emojiCode: string; reactionType: string },
): Promise<ReactionRow | null> {
  const { rows } = await db.query(
    `DELETE FROM reactions WHERE realm_id = $1 AND message_id = $2 AND user_id = $3 AND emoji_code = $4 AND reaction_type = $5
     RETURNING message_id, user_id, emoji_name, emoji_code, reaction_type`,
    [realmId, messageId, userId, emoji.emojiCode, emoji.reactionType],
  );
  return rows.length > 0 ? toReaction(rows[0]) : null;
}
