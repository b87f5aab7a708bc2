import type { Queryable } from "@chat/platform";
import { upsertAlertWords } from "../store/alert-words";

/** Stores a user's alert word list from accounts (a newer version already stored wins). */
export async function doReplicateAlertWords(tx: Queryable, realmId: number, userId: number, words: string[], version: number): Promise<void> {
  await upsertAlertWords(tx, realmId, userId, words, version);
}
