import { describe, expect, it } from "vitest";
import { formatAlertmanager } from "./alertmanager";
import { errorOf } from "./errors.test-support";

const DEFAULTS = { name: "instance", desc: "alertname" };
const alert = (status: string, alertname: string, instance: string, extra: Record<string, unknown> = {}) => ({
  status,
  labels: { alertname, instance, severity: "page" },
  annotations: { summary: `${alertname} on ${instance}` },
  generatorURL: `http://prom.example/graph?g0.expr=up&g0.tab=1`,
  ...extra,
});

describe("Alertmanager alerts", () => {
  it("make one message per topic (the instance) and status, a line per alert with its graph", () => {
    const payload = {
      status: "firing",
      alerts: [alert("firing", "HighLoad", "web1"), alert("firing", "DiskFull", "web1"), alert("resolved", "HighLoad", "db1")],
    };
    expect(formatAlertmanager(payload, DEFAULTS)).toEqual([
      {
        topic: "web1",
        eventType: "firing",
        content:
          ":rotating_light: **FIRING**\n* HighLoad: HighLoad on web1 ([graph](http://prom.example/graph?g0.expr=up&g0.tab=0))\n* DiskFull: DiskFull on web1 ([graph](http://prom.example/graph?g0.expr=up&g0.tab=0))",
      },
      { topic: "db1", eventType: "resolved", content: ":ok: **Resolved** HighLoad: HighLoad on db1 ([graph](http://prom.example/graph?g0.expr=up&g0.tab=0))" },
    ]);
  });

  it("take the topic and the description from the labels or annotations `name` and `desc` name", () => {
    const payload = { alerts: [alert("firing", "HighLoad", "web1", { annotations: { summary: "Load is 9", runbook: "see wiki" } })] };
    expect(formatAlertmanager(payload, { name: "alertname", desc: "runbook" })).toEqual([
      { topic: "HighLoad", eventType: "firing", content: ":rotating_light: **FIRING** see wiki: Load is 9 ([graph](http://prom.example/graph?g0.expr=up&g0.tab=0))" },
    ]);
    expect(formatAlertmanager({ alerts: [{ status: "firing", labels: {} }] }, DEFAULTS)).toEqual([
      { topic: "(unknown)", eventType: "firing", content: ":rotating_light: **FIRING** <missing field: alertname>" },
    ]);
  });

  it("skip alerts of other statuses, and say UNSUPPORTED_WEBHOOK_EVENT_TYPE (a 200) when nothing else is left", () => {
    expect(formatAlertmanager({ alerts: [alert("silenced", "A", "x"), alert("firing", "B", "y")] }, DEFAULTS).map((m) => m.topic)).toEqual(["y"]);
    expect(errorOf(() => formatAlertmanager({ alerts: [alert("silenced", "A", "x")] }, DEFAULTS))).toEqual({
      status: 200,
      code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE",
      msg: "The 'silenced' event isn't currently supported by the Alertmanager webhook; ignoring",
    });
    expect(formatAlertmanager({ alerts: [] }, DEFAULTS)).toEqual([]);
  });

  it("refuse what is not an Alertmanager payload with ANOMALOUS_WEBHOOK_PAYLOAD", () => {
    const anomalous = (msg: string) => ({ status: 400, code: "ANOMALOUS_WEBHOOK_PAYLOAD", msg: `Unable to parse request: Did Alertmanager generate this event? ${msg}` });
    expect(errorOf(() => formatAlertmanager({ text: "hi" }, DEFAULTS))).toEqual(anomalous("Expected a list 'alerts'."));
    expect(errorOf(() => formatAlertmanager([], DEFAULTS))).toEqual(anomalous("Expected a list 'alerts'."));
    expect(errorOf(() => formatAlertmanager({ alerts: [{ labels: {} }] }, DEFAULTS))).toEqual(anomalous("Each alert needs a 'status'."));
    expect(errorOf(() => formatAlertmanager({ alerts: [{ status: "toString" }] }, DEFAULTS))).toMatchObject({ code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE" });
  });
});
