import { z } from "zod";
import { p, type ParamSpecs } from "../params";
import { empty, route } from "../route";

/**
 * Incoming webhook integrations (Zulip's `/api/v1/external/{name}`): URLs a third-party tool
 * posts its own payload to, with an API key (usually a bot's) in the query string
 * (`/external/json?api_key=KEY&stream=alerts&topic=ci`) or HTTP Basic; its user then posts a
 * formatted message in the channel, or, when no channel is named, a direct message to the bot's
 * owner (or to the person themself, for a person's key). A channel that does not exist drops the
 * message and tells the owner instead (a 200, so that the tool does not retry).
 */

/** One integration as register's `realm_incoming_webhook_bots` describes it to clients. */
export const IncomingWebhookIntegration = z.strictObject({
  name: z.string(),
  display_name: z.string(),
  /** The event types `only_events` / `exclude_events` filter by; null where it has none. */
  all_event_types: z.array(z.string()).nullable(),
  /** Settings a client offers when it builds the integration's URL (they become query parameters). */
  config_options: z.array(z.strictObject({ key: z.string(), label: z.string(), validator: z.string() })),
});
export type IncomingWebhookIntegration = z.infer<typeof IncomingWebhookIntegration>;

/** The event types the github integration gives its messages (Zulip's names for them). */
export const GITHUB_EVENT_TYPES = [
  "ping",
  "push_commits",
  "push_tags",
  "create",
  "delete",
  "opened_pull_request",
  "closed_pull_request",
  "updated_pull_request",
  "assigned_or_unassigned_pull_request",
  "pull_request_review_requested",
  "pull_request_ready_for_review",
  "pull_request_review",
  "pull_request_review_comment",
  "issues",
  "issue_comment",
  "commit_comment",
  "release",
  "fork",
  "star",
  "watch",
] as const;
export type GitHubEventType = (typeof GITHUB_EVENT_TYPES)[number];

/** The grafana integration's event types: unified alerting's statuses and the legacy alerts' states. */
export const GRAFANA_EVENT_TYPES = ["firing", "resolved", "alerting", "ok", "no_data", "pending", "paused"] as const;

/** The integrations this server offers, by name. */
export const INCOMING_WEBHOOK_INTEGRATIONS: readonly IncomingWebhookIntegration[] = [
  {
    name: "alertmanager",
    display_name: "Prometheus Alertmanager",
    all_event_types: ["firing", "resolved"],
    config_options: [
      { key: "name", label: "Label or annotation whose value is the topic (default: instance)", validator: "check_string" },
      { key: "desc", label: "Label or annotation that describes each alert (default: alertname)", validator: "check_string" },
    ],
  },
  {
    name: "github",
    display_name: "GitHub",
    all_event_types: [...GITHUB_EVENT_TYPES],
    config_options: [{ key: "branches", label: "Branches whose pushes are posted, comma-separated (default: all)", validator: "check_string" }],
  },
  {
    name: "grafana",
    display_name: "Grafana",
    all_event_types: [...GRAFANA_EVENT_TYPES],
    config_options: [],
  },
  { name: "json", display_name: "JSON formatter", all_event_types: null, config_options: [] },
  { name: "slack_incoming", display_name: "Slack-compatible webhook", all_event_types: null, config_options: [] },
];

/** What every integration URL takes besides its payload (Zulip's check_send_webhook_message). */
const webhookParams = {
  /** The API key; read by the gateway (HTTP Basic works as well). */
  api_key: p.str(),
  /**
   * A channel name or id; without one, the bot's owner (or the person whose key it is) gets a
   * direct message.
   */
  stream: p.str(),
  /** Replaces the integration's own topic. */
  topic: p.str(),
  /** Event types (shell-style patterns) to post, for integrations that have types. */
  only_events: p.json(z.array(z.string())),
  /** Event types (shell-style patterns) not to post. */
  exclude_events: p.json(z.array(z.string())),
  /** The payload's JSON, for a tool that posts it as a form field (multipart, or a form). */
  payload: p.str(),
};

function webhookRoute<P extends ParamSpecs>(name: string, params: P, summary: string) {
  return route({
    method: "POST",
    path: `/external/${name}`,
    service: "messaging",
    auth: "user",
    allowIncomingWebhooks: true,
    incomingWebhook: true,
    params: { ...webhookParams, ...params },
    response: empty,
    summary,
  });
}

/** Any JSON body, posted as a pretty-printed code block (topic "JSON"). */
export const JsonWebhook = webhookRoute("json", {}, "Post any JSON payload as a code block");

/**
 * Slack's incoming webhook format: a JSON body, or a form whose `payload` field holds it (as
 * Slack's clients send it). Topic: the payload's `channel`, else "(no topic)".
 */
export const SlackIncomingWebhook = webhookRoute("slack_incoming", {}, "Post a Slack incoming-webhook message");

/**
 * GitHub's repository and organization webhooks: the event type is the `X-GitHub-Event` header.
 * Pushes go to the topic "<repo> / <branch>", pull requests (with their reviews and review
 * comments) and issues to "<repo> / PR #N <title>" and "<repo> / issue #N <title>", the rest
 * (tags, branches created or deleted, forks, commit comments, releases, stars) to "<repo>".
 */
export const GitHubWebhook = webhookRoute(
  "github",
  {
    /**
     * Branches (comma-separated) whose pushes are posted; the others' are dropped. As in Zulip, a
     * branch is listed when its name occurs anywhere in the text (`main,release` takes `ease`).
     */
    branches: p.str(),
  },
  "Post GitHub events",
);

/** Grafana's alerting webhook (unified alerting, or the legacy dashboard alerts): one message per notification. */
export const GrafanaWebhook = webhookRoute("grafana", {}, "Post Grafana alerts");

/** Prometheus Alertmanager's webhook: one message per topic and status (firing, resolved). */
export const AlertmanagerWebhook = webhookRoute(
  "alertmanager",
  {
    /** The label (or annotation) whose value is an alert's topic. */
    name: p.str().default("instance"),
    /** The label (or annotation) that describes an alert in its line. */
    desc: p.str().default("alertname"),
  },
  "Post Prometheus Alertmanager alerts",
);
