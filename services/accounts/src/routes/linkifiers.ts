import { CreateLinkifier, DeleteLinkifier, GetLegacyFilters, GetLinkifiers, ReorderLinkifiers, UpdateLinkifier } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doAddLinkifier, doRemoveLinkifier, doReorderLinkifiers, doUpdateLinkifier } from "../actions/linkifiers";
import type { AccountsDeps } from "../deps";
import { getLinkifiers } from "../queries/linkifiers";

export function linkifierRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, GetLinkifiers, async ({ identity }) => ({ linkifiers: await getLinkifiers(deps, identity.realmId) }));

  registerRoute(app, GetLegacyFilters, async ({ identity }) => ({
    filters: (await getLinkifiers(deps, identity.realmId)).map((l) => [l.pattern, l.url_template, l.id] as [string, string, number]),
  }));

  registerRoute(app, CreateLinkifier, async ({ identity, params }) => ({
    id: await doAddLinkifier(deps, identity, params.pattern, params.url_template),
  }));

  registerRoute(app, UpdateLinkifier, async ({ identity, params }) => {
    await doUpdateLinkifier(deps, identity, params.filter_id, params.pattern, params.url_template);
    return {};
  });

  registerRoute(app, DeleteLinkifier, async ({ identity, params }) => {
    await doRemoveLinkifier(deps, identity, params.filter_id);
    return {};
  });

  registerRoute(app, ReorderLinkifiers, async ({ identity, params }) => {
    await doReorderLinkifiers(deps, identity, params.ordered_linkifier_ids);
    return {};
  });
}
