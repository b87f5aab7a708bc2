import { escapeInline, link, plural, withoutMentions } from "./markdown";
import { anomalousPayload, isObject, payloadReader, unsupportedEventType, type WebhookMessage } from "./payload";

/**
 * Grafana's alerting webhook, one message per notification, in two payload shapes: unified
 * alerting's (Grafana 8 and later: `status`, `title`, `alerts[]` with labels, annotations,
 * values and links, `externalURL`) and the legacy dashboard alerts' (`state`, `ruleName`,
 * `ruleUrl`, `message`, `evalMatches`). The topic is the notification's title without its
 * status prefix (the same while an alert fires and once it resolves), or the rule's name. The
 * event types are unified alerting's statuses and the legacy states (the contract's GRAFANA_EVENT_TYPES).
 */

const NAME = "Grafana";
const read = payloadReader(NAME);

const HEADINGS: Record<string, string> = {
  firing: ":fire: **Firing**",
  resolved: ":white_check_mark: **Resolved**",
  alerting: ":fire: **Alerting**",
  ok: ":white_check_mark: **OK**",
  no_data: ":grey_question: **No data**",
  pending: ":hourglass_flowing_sand: **Pending**",
  paused: ":zzz: **Paused**",
};

/** An alert's links, in the order shown. */
const LINKS = [
  ["generatorURL", "source"],
  ["dashboardURL", "dashboard"],
  ["panelURL", "panel"],
  ["silenceURL", "silence"],
] as const;

/** At most this many alerts of a notification are listed; the rest are counted. */
const MAX_ALERTS = 20;

export function formatGrafana(payload: unknown): WebhookMessage[] {
  if (!isObject(payload)) throw anomalousPayload(NAME, "Expected a JSON object.");
  if (Array.isArray(payload.alerts)) return [formatUnified(payload)];
  if (typeof payload.state === "string") return [formatLegacy(payload)];
  throw anomalousPayload(NAME, "Expected a list 'alerts' or a 'state'.");
}

function heading(status: string): string {
  if (!Object.hasOwn(HEADINGS, status)) throw unsupportedEventType(NAME, status);
  return HEADINGS[status];
}

function formatUnified(payload: Record<string, unknown>): WebhookMessage {
  const status = read.str(payload, "status");
  const head = heading(status);
  const alerts = payload.alerts as unknown[];
  const title = (read.optStr(payload, "title") ?? "").replace(/^\s*\[[A-Z]+(?::\d+)?\]\s*/, "").trim();
  const topic = title || read.optStr(payload, "commonLabels.alertname") || "Grafana alerts";
  const total = alerts.length + Math.max(0, read.optNum(payload, "truncatedAlerts") ?? 0);
  const externalUrl = read.optStr(payload, "externalURL");
  const lines = [`${head}: ${plural(total, "alert")}${externalUrl ? ` (${link("Grafana", externalUrl)})` : ""}`];
  lines.push(...alerts.slice(0, MAX_ALERTS).map((alert) => alertLine(alert, status)));
  if (total > MAX_ALERTS) lines.push(`* …and ${plural(total - MAX_ALERTS, "more alert")}`);
  // Without alerts, the text Grafana made of the notification is all there is to show.
  const message = alerts.length === 0 ? read.optStr(payload, "message")?.trim() : undefined;
  return { topic, eventType: status, content: lines.join("\n") + (message ? `\n\n${withoutMentions(message)}` : "") };
}

/** `* **name**: summary`, then its labels, values and links on an indented line of its own. */
function alertLine(alert: unknown, groupStatus: string): string {
  if (!isObject(alert)) throw anomalousPayload(NAME, "An alert is not an object.");
  const labels = stringsOf(alert.labels);
  const annotations = stringsOf(alert.annotations);
  const status = read.optStr(alert, "status");
  // A notification groups alerts; one whose status is not the group's says so.
  const own = status && status !== groupStatus ? `(${escapeInline(status)}) ` : "";
  const summary = annotations.summary || annotations.description;
  const first = `* ${own}**${escapeInline(labels.alertname || "Alert")}**${summary ? `: ${escapeInline(summary)}` : ""}`;
  const shownLabels = Object.entries(labels)
    .filter(([key]) => key !== "alertname" && !key.startsWith("__"))
    .map(([key, value]) => `${key}=${value}`);
  const values = isObject(alert.values)
    ? Object.entries(alert.values)
        .filter((e): e is [string, number | string] => typeof e[1] === "number" || typeof e[1] === "string")
        .map(([key, value]) => `${key} = ${value}`)
    : [];
  const links = LINKS.flatMap(([key, label]) => {
    const url = read.optStr(alert, key);
    return url ? [link(label, url)] : [];
  });
  const details = [shownLabels.map(escapeInline).join(", "), values.map(escapeInline).join(", "), links.join(" · ")].filter(Boolean);
  return details.length > 0 ? `${first}\n  ${details.join(" · ")}` : first;
}

function formatLegacy(payload: Record<string, unknown>): WebhookMessage {
  const state = read.str(payload, "state");
  const head = heading(state);
  const rule = read.optStr(payload, "ruleName")?.trim() || (read.optStr(payload, "title") ?? "").replace(/^\s*\[[^\]]*\]\s*/, "").trim();
  const url = read.optStr(payload, "ruleUrl");
  const name = rule || "Grafana alert";
  const lines = [`${head}: ${url ? link(name, url) : `**${escapeInline(name)}**`}`];
  const message = read.optStr(payload, "message")?.trim();
  if (message) lines.push("", withoutMentions(message));
  const matches = (read.optList(payload, "evalMatches") ?? []).filter(isObject);
  if (matches.length > 0) {
    lines.push("");
    for (const match of matches.slice(0, MAX_ALERTS)) {
      const metric = read.optStr(match, "metric") ?? "value";
      const value = match.value === null ? "no value" : String(typeof match.value === "number" || typeof match.value === "string" ? match.value : "?");
      lines.push(`* ${escapeInline(metric)}: ${escapeInline(value)}`);
    }
    if (matches.length > MAX_ALERTS) lines.push(`* …and ${plural(matches.length - MAX_ALERTS, "more metric")}`);
  }
  const image = read.optStr(payload, "imageUrl");
  if (image) lines.push("", link("graph", image));
  return { topic: name, eventType: state, content: lines.join("\n") };
}

/** Labels and annotations: a string map; anything else there is left out. */
function stringsOf(value: unknown): Record<string, string> {
  if (!isObject(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"));
}
