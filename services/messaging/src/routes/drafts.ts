import { CreateDrafts, DeleteDraft, EditDraft, GetDrafts } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doCreateDrafts, doDeleteDraft, doEditDraft } from "../actions/drafts";
import { getDrafts } from "../queries/drafts";

export const draftRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, GetDrafts, ({ identity }) => getDrafts(deps, identity));

  registerRoute(app, CreateDrafts, async ({ params, identity }) => ({ ids: await doCreateDrafts(deps, identity, params.drafts) }));

  registerRoute(app, EditDraft, async ({ params, identity }) => {
    await doEditDraft(deps, identity, params.draft_id, params.draft);
    return {};
  });

  registerRoute(app, DeleteDraft, async ({ params, identity }) => {
    await doDeleteDraft(deps, identity, params.draft_id);
    return {};
  });
};
