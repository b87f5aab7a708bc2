import { FetchApiKey, GetServerSettings } from "@chat/contracts";
import { readSubdomain, registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doFetchApiKey, doNotifyNewLogin } from "../actions/auth";
import type { AccountsDeps } from "../deps";
import { getServerSettings } from "../queries/server";

export function serverRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, GetServerSettings, ({ req }) => getServerSettings(deps, readSubdomain(req.headers)));

  registerRoute(app, FetchApiKey, async ({ params, req }) => {
    const { user, apiKey } = await doFetchApiKey(deps, params.username, params.password, readSubdomain(req.headers));
    await doNotifyNewLogin(deps, user, req.headers["user-agent"]);
    return { api_key: apiKey, email: user.email, user_id: user.id };
  });
}
