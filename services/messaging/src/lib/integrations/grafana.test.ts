import { describe, expect, it } from "vitest";
import { formatGrafana } from "./grafana";
import { errorOf } from "./errors.test-support";

const alert = (status: string, alertname: string, extra: Record<string, unknown> = {}) => ({
  status,
  labels: { alertname, team: "blue", __alert_rule_uid__: "abc" },
  annotations: { summary: `${alertname} is high` },
  startsAt: "2026-11-28T10:00:00Z",
  endsAt: "0001-01-01T00:00:00Z",
  generatorURL: "https://grafana.example/alerting/grafana/abc/view",
  silenceURL: "https://grafana.example/alerting/silence/new?alertmanager=grafana",
  dashboardURL: "",
  panelURL: "",
  fingerprint: "c6eadffa33fcdf37",
  values: { B: 95.2, C: 1 },
  ...extra,
});
const unified = (status: string, alerts: unknown[], extra: Record<string, unknown> = {}) => ({
  receiver: "chat",
  status,
  orgId: 1,
  alerts,
  groupLabels: { alertname: "CPU" },
  commonLabels: { alertname: "CPU", team: "blue" },
  commonAnnotations: {},
  externalURL: "https://grafana.example/",
  version: "1",
  groupKey: "{}:{alertname=\"CPU\"}",
  truncatedAlerts: 0,
  title: `[${status.toUpperCase()}${status === "firing" ? `:${alerts.length}` : ""}] CPU (blue)`,
  state: status === "firing" ? "alerting" : "ok",
  message: "Grafana's own text of it",
  ...extra,
});

describe("Grafana's unified alerting payload", () => {
  it("makes one message of a notification: its status, each alert with summary, labels, values and links", () => {
    expect(formatGrafana(unified("firing", [alert("firing", "CPU", { dashboardURL: "https://grafana.example/d/1" }), alert("resolved", "CPU")]))).toEqual([
      {
        topic: "CPU (blue)",
        eventType: "firing",
        content:
          ":fire: **Firing**: 2 alerts ([Grafana](https://grafana.example/))\n" +
          "* **CPU**: CPU is high\n" +
          "  team=blue · B = 95.2, C = 1 · [source](https://grafana.example/alerting/grafana/abc/view) · [dashboard](https://grafana.example/d/1) · [silence](https://grafana.example/alerting/silence/new?alertmanager=grafana)\n" +
          "* (resolved) **CPU**: CPU is high\n" +
          "  team=blue · B = 95.2, C = 1 · [source](https://grafana.example/alerting/grafana/abc/view) · [silence](https://grafana.example/alerting/silence/new?alertmanager=grafana)",
      },
    ]);
  });

  it("keeps the topic when the alert resolves: the title without its status prefix", () => {
    const [resolved] = formatGrafana(unified("resolved", [{ status: "resolved", labels: { alertname: "CPU" }, annotations: {} }]));
    expect(resolved).toEqual({ topic: "CPU (blue)", eventType: "resolved", content: ":white_check_mark: **Resolved**: 1 alert ([Grafana](https://grafana.example/))\n* **CPU**" });
    expect(formatGrafana(unified("firing", [alert("firing", "X")], { title: "" }))[0].topic).toBe("CPU");
    expect(formatGrafana(unified("firing", [alert("firing", "X")], { title: undefined, commonLabels: {} }))[0].topic).toBe("Grafana alerts");
  });

  it("lists twenty alerts at most and counts the rest, Grafana's truncated ones included", () => {
    const alerts = Array.from({ length: 22 }, (_, i) => ({ status: "firing", labels: { alertname: `A${i}` } }));
    const lines = formatGrafana(unified("firing", alerts, { truncatedAlerts: 3 }))[0].content.split("\n");
    expect(lines[0]).toBe(":fire: **Firing**: 25 alerts ([Grafana](https://grafana.example/))");
    expect(lines.slice(1, -1)).toHaveLength(20);
    expect(lines.at(-1)).toBe("* …and 5 more alerts");
  });

  it("shows Grafana's message only when there are no alerts, its mentions disarmed, and escapes alert text", () => {
    expect(formatGrafana(unified("firing", [], { message: "Check @**all** now" }))[0].content).toBe(
      ":fire: **Firing**: 0 alerts ([Grafana](https://grafana.example/))\n\nCheck \\@**all** now",
    );
    const [message] = formatGrafana(unified("firing", [{ status: "firing", labels: { alertname: "*Disk* [full]" }, annotations: { description: "$$x$$ <b>" } }]));
    expect(message.content.split("\n")[1]).toBe("* **\\*Disk\\* \\[full\\]**: \\$\\$x\\$\\$ \\<b\\>");
  });
});

describe("Grafana's legacy alert payload", () => {
  const legacy = {
    dashboardId: 1,
    evalMatches: [{ value: 100, metric: "High value", tags: null }, { value: null, metric: "Empty" }],
    imageUrl: "https://grafana.example/render/panel.png",
    message: "Someone is testing the alert notification within Grafana.",
    orgId: 0,
    panelId: 1,
    ruleId: 0,
    ruleName: "Test notification",
    ruleUrl: "https://grafana.example/d/abc?panelId=1",
    state: "alerting",
    tags: {},
    title: "[Alerting] Test notification",
  };

  it("posts the state, the rule (linked), the message, the metrics and the image, in the rule's topic", () => {
    expect(formatGrafana(legacy)).toEqual([
      {
        topic: "Test notification",
        eventType: "alerting",
        content:
          ":fire: **Alerting**: [Test notification](https://grafana.example/d/abc?panelId=1)\n\n" +
          "Someone is testing the alert notification within Grafana.\n\n" +
          "* High value: 100\n* Empty: no value\n\n" +
          "[graph](https://grafana.example/render/panel.png)",
      },
    ]);
  });

  it("names the other states, and takes the title's rule when ruleName is missing", () => {
    const only = { state: "ok", title: "[OK] Disk usage" };
    expect(formatGrafana(only)).toEqual([{ topic: "Disk usage", eventType: "ok", content: ":white_check_mark: **OK**: **Disk usage**" }]);
    expect(formatGrafana({ state: "no_data", ruleName: "R" })[0].content).toBe(":grey_question: **No data**: **R**");
    expect(formatGrafana({ state: "paused", ruleName: "R" })[0].content).toBe(":zzz: **Paused**: **R**");
    expect(formatGrafana({ state: "pending", ruleName: "R" })[0].content).toBe(":hourglass_flowing_sand: **Pending**: **R**");
    expect(formatGrafana({ state: "alerting" })[0].topic).toBe("Grafana alert");
  });
});

describe("Grafana's errors", () => {
  it("a state or status it does not know is UNSUPPORTED_WEBHOOK_EVENT_TYPE (a 200)", () => {
    expect(errorOf(() => formatGrafana({ state: "exploded", ruleName: "R" }))).toEqual({
      status: 200,
      code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE",
      msg: "The 'exploded' event isn't currently supported by the Grafana webhook; ignoring",
    });
    expect(errorOf(() => formatGrafana(unified("constructor", [])))).toMatchObject({ code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE" });
  });

  it("what is neither payload is ANOMALOUS_WEBHOOK_PAYLOAD", () => {
    const anomalous = (reason: string) => ({ status: 400, code: "ANOMALOUS_WEBHOOK_PAYLOAD", msg: `Unable to parse request: Did Grafana generate this event? ${reason}` });
    expect(errorOf(() => formatGrafana(null))).toEqual(anomalous("Expected a JSON object."));
    expect(errorOf(() => formatGrafana({ text: "hi" }))).toEqual(anomalous("Expected a list 'alerts' or a 'state'."));
    expect(errorOf(() => formatGrafana({ alerts: [] }))).toEqual(anomalous("'status' is missing or not a string."));
    expect(errorOf(() => formatGrafana({ status: "firing", alerts: [1] }))).toEqual(anomalous("An alert is not an object."));
    expect(errorOf(() => formatGrafana({ state: "ok", evalMatches: "x" }))).toEqual(anomalous("'evalMatches' is missing or not a list."));
  });
});
