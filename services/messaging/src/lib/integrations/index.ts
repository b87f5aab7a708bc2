import { formatAlertmanager } from "./alertmanager";
import { formatJson } from "./json";
import { parseJsonBody, type WebhookMessage } from "./payload";
import { decodeSlackPayload, formatSlackIncoming } from "./slack-incoming";

export { eventWanted, type WebhookMessage } from "./payload";

/** What an integration reads of a request to its URL. */
export interface WebhookPayload {
  /** The body as it came (undefined for a multipart form). */
  body: Buffer | undefined;
  contentType: string;
  /** Its own parameters: Slack's `payload` form field, Alertmanager's `name` and `desc`. */
  fields: Readonly<Record<string, string | undefined>>;
}

export interface Integration {
  /** Zulip's name for it: in its error messages and, as `Zulip<name>Webhook`, its messages' client. */
  webhookName: string;
  /** The messages a request makes; throws Zulip's INVALID_JSON, ANOMALOUS_WEBHOOK_PAYLOAD or UNSUPPORTED_WEBHOOK_EVENT_TYPE. */
  messages(request: WebhookPayload): WebhookMessage[];
}

/** The integrations by their URL's name (contracts' INCOMING_WEBHOOK_INTEGRATIONS describes them to clients). */
export const INTEGRATIONS = {
  json: { webhookName: "JSON", messages: (r) => formatJson(parseJsonBody(r.body)) },
  slack_incoming: { webhookName: "SlackIncoming", messages: (r) => formatSlackIncoming(decodeSlackPayload(r.body, r.contentType, r.fields.payload)) },
  alertmanager: {
    webhookName: "Alertmanager",
    messages: (r) => formatAlertmanager(parseJsonBody(r.body), { name: r.fields.name ?? "instance", desc: r.fields.desc ?? "alertname" }),
  },
} satisfies Record<string, Integration>;

export type IntegrationName = keyof typeof INTEGRATIONS;
