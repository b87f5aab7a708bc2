import { CreateSavedSnippet, DeleteSavedSnippet, GetSavedSnippets } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doCreateSavedSnippet, doDeleteSavedSnippet } from "../actions/saved-snippets";
import { getSavedSnippets } from "../queries/saved-snippets";

export const savedSnippetRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, GetSavedSnippets, async ({ identity }) => ({ saved_snippets: await getSavedSnippets(deps, identity) }));

  registerRoute(app, CreateSavedSnippet, async ({ params, identity }) => ({
    saved_snippet_id: await doCreateSavedSnippet(deps, identity, params.title, params.content),
  }));

  registerRoute(app, DeleteSavedSnippet, async ({ params, identity }) => {
    await doDeleteSavedSnippet(deps, identity, params.saved_snippet_id);
    return {};
  });
};
