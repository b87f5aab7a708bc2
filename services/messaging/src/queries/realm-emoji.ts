import type { RealmEmoji, RealmEmojiDict } from "@chat/contracts";
import type { Queryable } from "@chat/platform";
import type { CustomEmoji } from "../lib/emoji";
import { selectRealmEmoji, selectRealmEmojiByFileName, selectRealmEmojiById, type RealmEmojiRow } from "../store/realm-emoji";

/** Where an emoji's image is served (Zulip's local-storage paths, below the organization's URL). */
export const emojiImagePath = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/${fileName}`;
export const emojiStillPath = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/still/${stem(fileName)}.png`;

/** A file name without its extension. */
const stem = (fileName: string) => fileName.replace(/\.[^.]*$/, "");

/** Storage keys of an emoji's image and still image. */
export const emojiImageKey = (realmId: number, fileName: string) => `${realmId}/emoji/images/${fileName}`;
export const emojiStillKey = (realmId: number, id: number) => `${realmId}/emoji/images/still/${id}.png`;

export function formatRealmEmoji(row: RealmEmojiRow): RealmEmoji {
  return {
    id: String(row.id),
    name: row.name,
    source_url: emojiImagePath(row.realmId, row.fileName),
    still_url: row.isAnimated ? emojiStillPath(row.realmId, row.fileName) : null,
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
 * The stored image behind a custom emoji URL. Public, as Zulip serves them (message HTML shows
 * them in image tags, which carry no credentials): the random token in the file name is what
 * keeps them from being found. An unknown name gets null (a 404). Deactivated emoji keep
 * serving: old messages and reactions still show them.
 */
export async function accessRealmEmojiImage(
  db: Queryable,
  realmIdStr: string,
  fileName: string,
  still: boolean,
): Promise<{ key: string; contentType: string } | null> {
  if (!/^\d{1,9}$/.test(realmIdStr)) return null;
  const realmId = Number(realmIdStr);
  if (still) {
    const m = /^(\d{1,18})-[\w-]+\.png$/.exec(fileName);
    const row = m ? await selectRealmEmojiById(db, realmId, Number(m[1])) : null;
    return row?.isAnimated && `${stem(row.fileName)}.png` === fileName ? { key: emojiStillKey(row.realmId, row.id), contentType: "image/png" } : null;
  }
  const row = await selectRealmEmojiByFileName(db, realmId, fileName);
  return row ? { key: emojiImageKey(row.realmId, row.fileName), contentType: row.contentType } : null;
}
