import { CreatePlayground, DeletePlayground } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doAddPlayground, doRemovePlayground } from "../actions/playgrounds";
import type { AccountsDeps } from "../deps";

export function playgroundRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, CreatePlayground, async ({ identity, params }) => ({
    id: await doAddPlayground(deps, identity, params.name, params.pygments_language, params.url_template),
  }));

  registerRoute(app, DeletePlayground, async ({ identity, params }) => {
    await doRemovePlayground(deps, identity, params.playground_id);
    return {};
  });
}
