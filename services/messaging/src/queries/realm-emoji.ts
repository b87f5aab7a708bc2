import type { RealmEmoji, RealmEmojiDict } from "@chat/contracts";
import type { Identity, Queryable } from "@chat/platform";
import type { CustomEmoji } from "../lib/emoji";
import { selectRealmEmoji, selectRealmEmojiByFileName, selectRealmEmojiById, type RealmEmojiRow } from "../store/realm-emoji";

/** Where an emoji's image is served (Zulip's local-storage paths, below the organization's URL). */
export const emojiImagePath = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/${fileName}`;
export const emojiStillPath = (realmId: number, id: number) => `/user_avatars/${realmId}/emoji/images/still/${id}.png`;

/** Storage keys of an emoji's image and still image. */
export const emojiImageKey = (realmId: number, fileName: string) => `${realmId}/emoji/images/${fileName}`;
export const emojiStillKey = (realmId: number, id: number) => `${realmId}/emoji/images/still/${id}.png`;

export function formatRealmEmoji(row: RealmEmojiRow): RealmEmoji {
  return {
    id: String(row.id),
    name: row.name,
    source_url: emojiImagePath(row.realmId, row.fileName),
    still_url: row.isAnimated ? emojiStillPath(row.realmId, row.id) : null,
    deactivated: row.deactivated,
    author_id: row.authorId,
  };
}

/** Zulip's get_all_custom_emoji_for_realm: every custom emoji, deactivated too, keyed by id. */
export async function getRealmEmojiDict(db: Queryable, realmId: number): Promise<RealmEmojiDict> {
  const rows = await selectRealmEmoji(db, realmId);
  return Object.fromEntries(rows.map((r) => [String(r.id), formatRealmEmoji(r)]));
}

/** The realm's custom emoji for reaction checks: active ones by name, all by id. */
export async function getCustomEmojiLookup(db: Queryable, realmId: number) {
  const rows = await selectRealmEmoji(db, realmId);
  const activeByName = new Map<string, CustomEmoji>(rows.filter((r) => !r.deactivated).map((r) => [r.name, r]));
  const byId = new Map<string, CustomEmoji>(rows.map((r) => [String(r.id), r]));
  return { activeByName, byId: (id: string) => byId.get(id) };
}

/**
 * The stored image behind a custom emoji URL, for a user of its organization (any other, and
 * a name no emoji has, get null: a 404 like a missing file). Deactivated emoji keep serving:
 * old messages and reactions still show them.
 */
export async function accessRealmEmojiImage(
  db: Queryable,
  who: Identity,
  realmIdStr: string,
  fileName: string,
  still: boolean,
): Promise<{ key: string; contentType: string } | null> {
  if (realmIdStr !== String(who.realmId)) return null;
  if (still) {
    const m = /^(\d{1,18})\.png$/.exec(fileName);
    const row = m ? await selectRealmEmojiById(db, who.realmId, Number(m[1])) : null;
    return row?.isAnimated ? { key: emojiStillKey(row.realmId, row.id), contentType: "image/png" } : null;
  }
  const row = await selectRealmEmojiByFileName(db, who.realmId, fileName);
  return row ? { key: emojiImageKey(row.realmId, row.fileName), contentType: row.contentType } : null;
}
