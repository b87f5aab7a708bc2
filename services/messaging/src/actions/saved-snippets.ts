import { MessagingSavedSnippetAdded, MessagingSavedSnippetRemoved } from "@chat/contracts";
import { badRequest, emitEvent, resourceNotFound, withTx, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { savedSnippetObject } from "../queries/saved-snippets";
import { deleteSavedSnippet, insertSavedSnippet } from "../store/saved-snippets";

/**
 * POST /saved_snippets (Zulip's create_saved_snippet): the lengths were checked as sent (the
 * contract); the stripped title and content must not be empty. The new snippet goes to the
 * user's own queues.
 */
export async function doCreateSavedSnippet(deps: AppDeps, who: Identity, title: string, content: string): Promise<number> {
  title = title.trim();
  content = content.trim();
  if (title.length === 0) throw badRequest("Title cannot be empty.");
  if (content.length === 0) throw badRequest("Content cannot be empty.");
  return withTx(deps.pool, async (tx) => {
    const row = await insertSavedSnippet(tx, who.realmId, who.userId, title, content, deps.clock.now());
    const event = { type: "saved_snippets", op: "add", saved_snippet: savedSnippetObject(row) };
    const payload = MessagingSavedSnippetAdded.parse({ user_id: who.userId, client: { event, users: [who.userId] } });
    await emitEvent(tx, { type: "messaging.saved_snippet.added", realmId: who.realmId, payload });
    return row.id;
  });
}

/** DELETE /saved_snippets/{id}: another user's snippet is as missing as a deleted one (404). */
export async function doDeleteSavedSnippet(deps: AppDeps, who: Identity, id: number): Promise<void> {
  await withTx(deps.pool, async (tx) => {
    if (!(await deleteSavedSnippet(tx, who.realmId, who.userId, id))) throw resourceNotFound("Saved snippet does not exist.");
    const event = { type: "saved_snippets", op: "remove", saved_snippet_id: id };
    const payload = MessagingSavedSnippetRemoved.parse({ user_id: who.userId, client: { event, users: [who.userId] } });
    await emitEvent(tx, { type: "messaging.saved_snippet.removed", realmId: who.realmId, payload });
  });
}
