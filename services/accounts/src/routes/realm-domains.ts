import { CreateRealmDomain, DeleteRealmDomain, ListRealmDomains, UpdateRealmDomain } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doAddRealmDomain, doChangeRealmDomain, doRemoveRealmDomain } from "../actions/realm-domains";
import type { AccountsDeps } from "../deps";
import { getRealmDomains } from "../queries/realm-domains";

export function realmDomainRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, ListRealmDomains, async ({ identity }) => ({ domains: await getRealmDomains(deps.pool, identity.realmId) }));

  registerRoute(app, CreateRealmDomain, async ({ identity, params }) => ({
    new_domain: await doAddRealmDomain(deps, identity, params.domain, params.allow_subdomains),
  }));

  registerRoute(app, UpdateRealmDomain, async ({ identity, params }) => {
    await doChangeRealmDomain(deps, identity, params.domain, params.allow_subdomains);
    return {};
  });

  registerRoute(app, DeleteRealmDomain, async ({ identity, params }) => {
    await doRemoveRealmDomain(deps, identity, params.domain);
    return {};
  });
}
