import { link, withoutMentions } from "./markdown";
import { anomalousPayload, isObject, unsupportedEventType, type WebhookMessage } from "./payload";

/**
 * Prometheus Alertmanager's webhook, as Zulip formats it: alerts grouped by topic (the value of
 * the `name` label or annotation, `instance` by default), one message per topic and status, each
 * alert a line with its description (`desc`, `alertname` by default), its summary annotation
 * and a link to its graph. The event types are the statuses, `firing` and `resolved`.
 */

const NAME = "Alertmanager";
const anomalous = (reason: string) => anomalousPayload(NAME, reason);

export interface AlertmanagerOptions {
  /** The label (or annotation) naming an alert's topic. */
  name: string;
  /** The label (or annotation) describing an alert in its line. */
  desc: string;
}

const STATUSES = {
  firing: { icon: ":rotating_light:", title: "FIRING" },
  resolved: { icon: ":ok:", title: "Resolved" },
} as const;
type Status = keyof typeof STATUSES;

export function formatAlertmanager(payload: unknown, options: AlertmanagerOptions): WebhookMessage[] {
  if (!isObject(payload) || !Array.isArray(payload.alerts)) throw anomalous("Expected a list 'alerts'.");
  const topics = new Map<string, Record<Status, string[]>>();
  const unsupported: string[] = [];
  for (const alert of payload.alerts) {
    if (!isObject(alert) || typeof alert.status !== "string") throw anomalous("Each alert needs a 'status'.");
    if (!Object.hasOwn(STATUSES, alert.status)) {
      unsupported.push(alert.status);
      continue;
    }
    const labels = stringsOf(alert.labels);
    const annotations = stringsOf(alert.annotations);
    // Own fields only: a URL's `name=constructor` must not find Object's.
    const field = (key: string) => (Object.hasOwn(labels, key) && labels[key]) || (Object.hasOwn(annotations, key) && annotations[key]) || undefined;
    const topic = field(options.name) ?? "(unknown)";
    const lines = topics.get(topic) ?? { firing: [], resolved: [] };
    topics.set(topic, lines);
    lines[alert.status as Status].push(alertLine(field(options.desc) ?? `<missing field: ${options.desc}>`, options.desc, annotations, alert.generatorURL));
  }
  const messages: WebhookMessage[] = [];
  for (const [topic, lines] of topics) {
    for (const status of Object.keys(STATUSES) as Status[]) {
      const { icon, title } = STATUSES[status];
      const list = lines[status];
      if (list.length === 0) continue;
      const content = list.length === 1 ? `${icon} **${title}** ${list[0]}` : `${icon} **${title}**\n${list.map((l) => `* ${l}`).join("\n")}`;
      messages.push({ topic, content, eventType: status });
    }
  }
  // Only statuses it does not know: say so, as Zulip does for events it does not handle.
  if (messages.length === 0 && unsupported.length > 0) throw unsupportedEventType(NAME, unsupported[0]);
  return messages;
}

/** Labels and annotations: a string map; anything else there is left out. */
function stringsOf(value: unknown): Record<string, string> {
  if (!isObject(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/**
 * The alert's line. Labels and annotations keep their Markdown (operators write links and
 * emphasis there), but stay on the line and mention nobody: label values can come from what
 * Prometheus scraped.
 */
function alertLine(desc: string, descField: string, annotations: Record<string, string>, generatorUrl: unknown): string {
  const summary = ["summary", "description"].map((key) => (key === descField ? "" : annotations[key])).find(Boolean);
  const text = withoutMentions((summary ? `${desc}: ${summary}` : desc).replace(/\s*[\r\n]\s*/g, " "));
  // Prometheus's graph tab rather than its console tab, as Zulip links it.
  return typeof generatorUrl === "string" && generatorUrl ? `${text} (${link("graph", generatorUrl.replace(/tab=1/g, "tab=0"))})` : text;
}
