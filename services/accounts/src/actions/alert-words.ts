import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { deleteAlertWords, insertAlertWords, listAlertWords, lockAlertWordsOwner, nextAlertWordsVersion } from "../store/alert-words";

/** Surrounding spaces are dropped and blank words ignored, as Zulip does. */
const clean = (words: string[]) => words.map((w) => w.trim()).filter((w) => w !== "");

/**
 * Applies a change to the caller's alert words and sends the whole new list: to the user's
 * clients (`alert_words`, sent even when nothing changed, as Zulip does) and to messaging's
 * replica (versioned, so it never goes back to an older list).
 */
async function changeAlertWords(deps: AccountsDeps, who: Identity, change: (tx: Queryable) => Promise<void>): Promise<string[]> {
  return withTx(deps.pool, async (tx) => {
    if (!(await lockAlertWordsOwner(tx, who.realmId, who.userId))) throw badRequest("No such user");
    await change(tx);
    const words = await listAlertWords(tx, who.realmId, who.userId);
    await emitEvent(tx, {
      type: "accounts.alert_words.changed",
      realmId: who.realmId,
      payload: {
        user_id: who.userId,
        alert_words: words,
        version: await nextAlertWordsVersion(tx),
        client: { event: { type: "alert_words", alert_words: words }, users: [who.userId] },
      },
    });
    return words;
  });
}

/** POST /users/me/alert_words: words already present (in any case) are kept as they are. */
export function doAddAlertWords(deps: AccountsDeps, who: Identity, words: string[]): Promise<string[]> {
  const add = [...new Map(clean(words).map((w) => [w.toLowerCase(), w])).values()];
  return changeAlertWords(deps, who, (tx) => insertAlertWords(tx, who.realmId, who.userId, add));
}

/** DELETE /users/me/alert_words: removes matching words regardless of case. */
export function doRemoveAlertWords(deps: AccountsDeps, who: Identity, words: string[]): Promise<string[]> {
  return changeAlertWords(deps, who, (tx) => deleteAlertWords(tx, who.realmId, who.userId, clean(words)));
}
