import { describe, expect, it } from "vitest";
import { GITHUB_EVENT_TYPES, GRAFANA_EVENT_TYPES, INCOMING_WEBHOOK_INTEGRATIONS, publicRoutes } from "@chat/contracts";
import { INTEGRATIONS } from "./index";

describe("the integrations", () => {
  it("are served at /external/{name} for every one register describes, and only those", () => {
    const described = INCOMING_WEBHOOK_INTEGRATIONS.map((i) => i.name).sort();
    expect(Object.keys(INTEGRATIONS).sort()).toEqual(described);
    const urls = publicRoutes.filter((r) => r.incomingWebhook).map((r) => r.path).sort();
    expect(urls).toEqual(described.map((name) => `/external/${name}`));
    for (const r of publicRoutes.filter((r) => r.incomingWebhook)) expect(r).toMatchObject({ method: "POST", service: "messaging", auth: "user", allowIncomingWebhooks: true });
  });

  it("describe to clients the event types their formatters give (what only_events / exclude_events match)", () => {
    const described = (name: string) => INCOMING_WEBHOOK_INTEGRATIONS.find((i) => i.name === name)?.all_event_types;
    expect(described("github")).toEqual([...GITHUB_EVENT_TYPES]);
    expect(described("grafana")).toEqual([...GRAFANA_EVENT_TYPES]);
    expect(described("alertmanager")).toEqual(["firing", "resolved"]);
  });
});
