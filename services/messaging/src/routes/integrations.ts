import { AlertmanagerWebhook, GitHubWebhook, GrafanaWebhook, JsonWebhook, SlackIncomingWebhook } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyRequest } from "fastify";
import type { RoutePlugin } from "../deps";
import { doIncomingWebhook, type WebhookRequest } from "../actions/integrations";

type Common = { stream?: string; topic?: string; only_events?: string[]; exclude_events?: string[]; payload?: string };

/** What every integration URL's request carries besides its own fields. */
const common = (params: Common, req: FastifyRequest): Omit<WebhookRequest, "integration"> => ({
  body: req.rawBody,
  contentType: String(req.headers["content-type"] ?? ""),
  headers: req.headers,
  stream: params.stream,
  topic: params.topic,
  onlyEvents: params.only_events,
  excludeEvents: params.exclude_events,
  fields: { payload: params.payload },
});

/** Incoming webhook integrations: `POST /external/{name}`, a third party's payload posted by a bot (or a person). */
export const integrationRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, JsonWebhook, async ({ params, identity, req }) => {
    await doIncomingWebhook(deps, identity, { ...common(params, req), integration: "json" });
    return {};
  });

  registerRoute(app, SlackIncomingWebhook, async ({ params, identity, req }) => {
    await doIncomingWebhook(deps, identity, { ...common(params, req), integration: "slack_incoming" });
    return {};
  });

  registerRoute(app, AlertmanagerWebhook, async ({ params, identity, req }) => {
    const request = common(params, req);
    await doIncomingWebhook(deps, identity, { ...request, integration: "alertmanager", fields: { ...request.fields, name: params.name, desc: params.desc } });
    return {};
  });

  registerRoute(app, GitHubWebhook, async ({ params, identity, req }) => {
    const request = common(params, req);
    await doIncomingWebhook(deps, identity, { ...request, integration: "github", fields: { ...request.fields, branches: params.branches } });
    return {};
  });

  registerRoute(app, GrafanaWebhook, async ({ params, identity, req }) => {
    await doIncomingWebhook(deps, identity, { ...common(params, req), integration: "grafana" });
    return {};
  });
};
