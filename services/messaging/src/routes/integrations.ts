import { AlertmanagerWebhook, JsonWebhook, SlackIncomingWebhook } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyRequest } from "fastify";
import type { RoutePlugin } from "../deps";
import { doIncomingWebhook, type WebhookRequest } from "../actions/integrations";

type Common = { stream?: string; topic?: string; only_events?: string[]; exclude_events?: string[] };

/** What every integration URL's request carries besides its own fields. */
const common = (params: Common, req: FastifyRequest): Omit<WebhookRequest, "integration" | "fields"> => ({
  body: req.rawBody,
  contentType: String(req.headers["content-type"] ?? ""),
  stream: params.stream,
  topic: params.topic,
  onlyEvents: params.only_events,
  excludeEvents: params.exclude_events,
});

/** Incoming webhook integrations: `POST /external/{name}`, a third party's payload posted by a bot. */
export const integrationRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, JsonWebhook, async ({ params, identity, req }) => {
    await doIncomingWebhook(deps, identity, { ...common(params, req), integration: "json", fields: {} });
    return {};
  });

  registerRoute(app, SlackIncomingWebhook, async ({ params, identity, req }) => {
    await doIncomingWebhook(deps, identity, { ...common(params, req), integration: "slack_incoming", fields: { payload: params.payload } });
    return {};
  });

  registerRoute(app, AlertmanagerWebhook, async ({ params, identity, req }) => {
    await doIncomingWebhook(deps, identity, { ...common(params, req), integration: "alertmanager", fields: { name: params.name, desc: params.desc } });
    return {};
  });
};
