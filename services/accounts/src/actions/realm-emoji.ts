import type { RealmEmojiDict } from "@chat/contracts";
import type { AccountsDeps } from "../deps";
import { messagingOf } from "../lib/messaging-client";
import { listRealmEmoji, mergeRealmEmoji, type RealmEmojiRow } from "../store/realm-emoji";

/**
 * Merges a whole dictionary from messaging (its messaging.realm_emoji.updated, or its answer on
 * a miss) into the replica. Emoji are never deleted nor reactivated and ids never reused, so
 * keeping every id and every deactivation is right in any order and any number of times.
 */
export async function doMergeRealmEmoji(deps: AccountsDeps, realmId: number, dict: RealmEmojiDict): Promise<void> {
  const rows = Object.values(dict).map((e) => ({ id: Number(e.id), name: e.name, deactivated: e.deactivated }));
  await mergeRealmEmoji(deps.pool, realmId, rows);
}

/**
 * The organization's custom emoji for a check. When `found` says the replica lacks the emoji
 * asked for, messaging's dictionary is read and merged once: emoji uploaded before the replica
 * existed, or whose event has not arrived yet. If messaging does not answer, the replica answers.
 */
export async function doLoadRealmEmoji(deps: AccountsDeps, realmId: number, found: (emoji: RealmEmojiRow[]) => boolean): Promise<RealmEmojiRow[]> {
  const emoji = await listRealmEmoji(deps.pool, realmId);
  if (found(emoji)) return emoji;
  try {
    await doMergeRealmEmoji(deps, realmId, await messagingOf(deps).realmEmoji(realmId));
  } catch (err) {
    deps.log.warn({ err, realmId }, "custom emoji read-through failed; answering from the replica");
    return emoji;
  }
  return listRealmEmoji(deps.pool, realmId);
}
