import type { SavedSnippet } from "@chat/contracts";
import type { Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { selectSavedSnippets, type SavedSnippetRow } from "../store/saved-snippets";

export function savedSnippetObject(s: SavedSnippetRow): SavedSnippet {
  return { id: s.id, title: s.title, content: s.content, date_created: Math.floor(s.dateCreated.getTime() / 1000) };
}

/** GET /saved_snippets and register's `saved_snippets`: the caller's own, oldest first. */
export async function getSavedSnippets(deps: AppDeps, who: Identity): Promise<SavedSnippet[]> {
  return (await selectSavedSnippets(deps.pool, who.realmId, who.userId)).map(savedSnippetObject);
}
