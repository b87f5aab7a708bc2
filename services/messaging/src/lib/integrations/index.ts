import { formatAlertmanager } from "./alertmanager";
import { EVENT_HEADER, formatGitHub } from "./github";
import { formatGrafana } from "./grafana";
import { formatJson } from "./json";
import { decodeJsonPayload, flatTopic, type WebhookMessage } from "./payload";
import { decodeSlackPayload, formatSlackIncoming } from "./slack-incoming";

export { eventWanted, type WebhookMessage } from "./payload";
export { missingChannelNotice } from "./notices";

/** What an integration reads of a request to its URL. */
export interface WebhookPayload {
  /** The body as it came (undefined for a multipart form). */
  body: Buffer | undefined;
  contentType: string;
  /** The request's headers, by lower-case name (GitHub names its event in one). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Its own parameters: the form field `payload`, Alertmanager's `name` and `desc`, GitHub's `branches`. */
  fields: Readonly<Record<string, string | undefined>>;
}

export interface Integration {
  /** Zulip's name for it: in its error messages and, as `Zulip<name>Webhook`, its messages' client. */
  webhookName: string;
  /** The messages a request makes; throws Zulip's INVALID_JSON, ANOMALOUS_WEBHOOK_PAYLOAD or UNSUPPORTED_WEBHOOK_EVENT_TYPE. */
  messages(request: WebhookPayload): WebhookMessage[];
}

/** The JSON payload, from the body or a form's `payload` field. */
const json = (r: WebhookPayload) => decodeJsonPayload(r.body, r.contentType, r.fields.payload);

const header = (r: WebhookPayload, name: string) => {
  const value = r.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
};

/** The integrations by their URL's name (contracts' INCOMING_WEBHOOK_INTEGRATIONS describes them to clients). */
export const INTEGRATIONS = {
  alertmanager: {
    webhookName: "Alertmanager",
    messages: (r) => formatAlertmanager(json(r), { name: r.fields.name ?? "instance", desc: r.fields.desc ?? "alertname" }),
  },
  github: { webhookName: "GitHub", messages: (r) => formatGitHub(header(r, EVENT_HEADER), json(r), { branches: r.fields.branches }) },
  grafana: { webhookName: "Grafana", messages: (r) => formatGrafana(json(r)) },
  json: { webhookName: "JSON", messages: (r) => formatJson(json(r)) },
  slack_incoming: { webhookName: "SlackIncoming", messages: (r) => formatSlackIncoming(decodeSlackPayload(r.body, r.contentType, r.fields.payload)) },
} satisfies Record<string, Integration>;

export type IntegrationName = keyof typeof INTEGRATIONS;

/** The messages an integration makes of a request, each topic made fit to be one (see flatTopic). */
export function integrationMessages(name: IntegrationName, request: WebhookPayload): WebhookMessage[] {
  return INTEGRATIONS[name].messages(request).map((m) => ({ ...m, topic: flatTopic(m.topic) }));
}
