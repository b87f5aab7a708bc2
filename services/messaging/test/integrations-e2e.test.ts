import { beforeAll, describe, expect, it } from "vitest";
import { IncomingWebhookIntegration } from "@chat/contracts";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { ok, register, useDemoStack, waitForEvents } from "@chat/testkit/e2e";

/**
 * Incoming webhook integrations end to end: a third party's payload posted to
 * `/api/v1/external/{name}` with an incoming webhook bot's key in the URL, through the gateway,
 * sent by the bot with messaging's normal send, and read back with GET /messages.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const e2e = useDemoStack({}, ({ demo }) => {
  [org, org2] = demo.orgs;
});
const as = (u: DemoUser) => e2e.as(u);

/** The incoming webhook bot the member owns. */
let bot: { user_id: number; email: string; api_key: string };

interface Hook {
  status: number;
  body: any;
}

/** A POST to an integration URL: `query` after `?`, the body raw (JSON unless said otherwise). */
async function hook(name: string, query: Record<string, string>, body: string, headers: Record<string, string> = { "content-type": "application/json" }): Promise<Hook> {
  const url = `${e2e.demo.base_url}/api/v1/external/${name}?${new URLSearchParams(query)}`;
  const res = await fetch(url, { method: "POST", headers, body });
  return { status: res.status, body: await res.json() };
}

/** The newest messages of a channel's topic, as `viewer` reads them (raw Markdown). */
async function topicMessages(viewer: DemoUser, channel: string, topic: string): Promise<any[]> {
  const narrow = JSON.stringify([{ operator: "channel", operand: channel }, { operator: "topic", operand: topic }]);
  return ok(await as(viewer).get("/messages", { anchor: "newest", num_before: 20, num_after: 0, narrow, apply_markdown: false })).messages;
}

const succeeded = (res: Hook) => {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({ result: "success", msg: "" });
};

beforeAll(async () => {
  const made = ok(await as(org.users.member).post("/bots", { full_name: "CI Hooks", short_name: "ci-hooks", bot_type: 2 }));
  bot = { user_id: made.user_id, api_key: made.api_key, email: ok(await as(org.users.member).get(`/users/${made.user_id}`)).user.email };
});

describe("the JSON formatter (/external/json)", () => {
  it("posts any JSON body as a pretty-printed code block in the named channel and topic, sent by the bot", async () => {
    const queue = await register(as(org.users.member2), { event_types: ["message"] });
    const channel = org.channels.public.name;
    // A parameter the integration does not use is not reported, as for Zulip's webhook views.
    succeeded(await hook("json", { api_key: bot.api_key, stream: channel, topic: "ci", utm_source: "tool" }, '{"build": {"id": 7, "ok": true}}'));
    const [message] = await topicMessages(org.users.member2, channel, "ci");
    expect(message).toMatchObject({
      sender_id: bot.user_id,
      client: "ZulipJSONWebhook",
      content: '```json\n{\n  "build": {\n    "id": 7,\n    "ok": true\n  }\n}\n```',
    });
    // A send like any other: the channel's subscribers hear of it.
    const [event] = await waitForEvents(queue, 1);
    expect(event.message).toMatchObject({ id: message.id, sender_id: bot.user_id, subject: "ci" });
  });

  it("takes the key in HTTP Basic too, and a channel by id; without `topic` the topic is JSON", async () => {
    const authorization = "Basic " + Buffer.from(`${bot.email}:${bot.api_key}`).toString("base64");
    succeeded(await hook("json", { stream: String(org.channels.public.stream_id) }, "[1, 2]", { "content-type": "application/json", authorization }));
    const [message] = await topicMessages(org.users.member, org.channels.public.name, "JSON");
    expect(message).toMatchObject({ sender_id: bot.user_id, content: "```json\n[\n  1,\n  2\n]\n```" });
  });

  it("without a channel, sends the bot's owner a direct message", async () => {
    succeeded(await hook("json", { api_key: bot.api_key }, '{"to": "owner"}'));
    const narrow = JSON.stringify([{ operator: "dm", operand: [bot.user_id] }]);
    const { messages } = ok(await as(org.users.member).get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow, apply_markdown: false }));
    expect(messages[0]).toMatchObject({ type: "private", sender_id: bot.user_id, content: '```json\n{\n  "to": "owner"\n}\n```' });
    expect(messages[0].display_recipient.map((r: any) => r.id).sort()).toEqual([org.users.member.user_id, bot.user_id].sort());
  });

  it("reads a JSON body a tool sent as a form (`curl -d`)", async () => {
    succeeded(await hook("json", { api_key: bot.api_key, stream: org.channels.public.name, topic: "curl" }, '{"a": "b&c=d"}', { "content-type": "application/x-www-form-urlencoded" }));
    const [message] = await topicMessages(org.users.member, org.channels.public.name, "curl");
    expect(message.content).toBe('```json\n{\n  "a": "b&c=d"\n}\n```');
  });

  it("refuses a body that is not JSON with 400 INVALID_JSON", async () => {
    const res = await hook("json", { api_key: bot.api_key, stream: org.channels.public.name }, "{not json");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Malformed JSON", code: "INVALID_JSON" });
  });
});

describe("Slack-compatible webhooks (/external/slack_incoming)", () => {
  it("post text, blocks and attachments with Slack's formatting in Markdown", async () => {
    const payload = {
      text: "Deploy of *api* finished <https://ci.example/runs/9|run 9>",
      attachments: [{ title: "Changes", title_link: "https://git.example/c/1", text: "_2_ commits by <@U12|ana>", fields: [{ title: "Env", value: "prod" }] }],
    };
    succeeded(await hook("slack_incoming", { api_key: bot.api_key, stream: org.channels.public.name, topic: "deploys" }, JSON.stringify(payload)));
    const [message] = await topicMessages(org.users.member, org.channels.public.name, "deploys");
    expect(message).toMatchObject({
      sender_id: bot.user_id,
      client: "ZulipSlackIncomingWebhook",
      content: "Deploy of **api** finished [run 9](https://ci.example/runs/9)\n\n**[Changes](https://git.example/c/1)**\n\n*2* commits by @ana\n\n**Env**: prod",
    });
  });

  it("read a form whose `payload` field holds the JSON, the key in the form as well, the topic from the payload's channel", async () => {
    const form = new URLSearchParams({ api_key: bot.api_key, payload: JSON.stringify({ channel: "#builds", text: "~old~ new" }) }).toString();
    succeeded(await hook("slack_incoming", { stream: org.channels.public.name }, form, { "content-type": "application/x-www-form-urlencoded" }));
    const [message] = await topicMessages(org.users.member, org.channels.public.name, "builds");
    expect(message).toMatchObject({ sender_id: bot.user_id, content: "~~old~~ new" });
  });

  it("refuse what is not a Slack payload with 400 ANOMALOUS_WEBHOOK_PAYLOAD, and a form without `payload`", async () => {
    const anomalous = await hook("slack_incoming", { api_key: bot.api_key, stream: org.channels.public.name }, '{"text": 42}');
    expect(anomalous.status).toBe(400);
    expect(anomalous.body).toEqual({ result: "error", code: "ANOMALOUS_WEBHOOK_PAYLOAD", msg: "Unable to parse request: Did SlackIncoming generate this event? 'text' is not a string." });
    const noPayload = await hook("slack_incoming", { api_key: bot.api_key, stream: org.channels.public.name }, "text=hi", { "content-type": "application/x-www-form-urlencoded" });
    expect(noPayload.status).toBe(400);
    expect(noPayload.body).toMatchObject({ code: "REQUEST_VARIABLE_MISSING", msg: "Missing 'payload' argument" });
  });
});

describe("Prometheus Alertmanager (/external/alertmanager)", () => {
  const alert = (status: string, alertname: string, instance: string) => ({
    status,
    labels: { alertname, instance, job: "node" },
    annotations: { summary: `${alertname} on ${instance}` },
    generatorURL: "http://prometheus.example/graph?g0.expr=up&g0.tab=1",
  });
  const payload = (...alerts: unknown[]) => JSON.stringify({ version: "4", status: "firing", receiver: "chat", alerts });

  it("posts a firing and a resolved alert, each in its instance's topic, with its graph link", async () => {
    succeeded(await hook("alertmanager", { api_key: bot.api_key, stream: org.channels.public.name }, payload(alert("firing", "HighLoad", "web-1"), alert("resolved", "DiskFull", "db-1"))));
    const [firing] = await topicMessages(org.users.member, org.channels.public.name, "web-1");
    expect(firing).toMatchObject({
      sender_id: bot.user_id,
      client: "ZulipAlertmanagerWebhook",
      content: ":rotating_light: **FIRING** HighLoad: HighLoad on web-1 ([graph](http://prometheus.example/graph?g0.expr=up&g0.tab=0))",
    });
    const [resolved] = await topicMessages(org.users.member, org.channels.public.name, "db-1");
    expect(resolved.content).toBe(":ok: **Resolved** DiskFull: DiskFull on db-1 ([graph](http://prometheus.example/graph?g0.expr=up&g0.tab=0))");
  });

  it("filters by event type with only_events / exclude_events, and names the topic label with `name`", async () => {
    const both = payload(alert("firing", "Filtered", "web-2"), alert("resolved", "Filtered", "web-2"));
    succeeded(await hook("alertmanager", { api_key: bot.api_key, stream: org.channels.public.name, name: "alertname", only_events: '["firing"]' }, both));
    succeeded(await hook("alertmanager", { api_key: bot.api_key, stream: org.channels.public.name, name: "alertname", exclude_events: '["fir*"]' }, both));
    const messages = await topicMessages(org.users.member, org.channels.public.name, "Filtered");
    expect(messages.map((m) => m.content.split(" ")[1])).toEqual(["**FIRING**", "**Resolved**"]);
  });

  it("answers an alert status it does not handle with 200 UNSUPPORTED_WEBHOOK_EVENT_TYPE, and refuses a payload without alerts", async () => {
    const unsupported = await hook("alertmanager", { api_key: bot.api_key, stream: org.channels.public.name }, payload(alert("silenced", "Quiet", "web-3")));
    expect(unsupported.status).toBe(200);
    expect(unsupported.body).toEqual({ result: "success", code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE", msg: "The 'silenced' event isn't currently supported by the Alertmanager webhook; ignoring" });
    expect(await topicMessages(org.users.member, org.channels.public.name, "web-3")).toEqual([]);
    const anomalous = await hook("alertmanager", { api_key: bot.api_key, stream: org.channels.public.name }, '{"alerts": "none"}');
    expect(anomalous.status).toBe(400);
    expect(anomalous.body.code).toBe("ANOMALOUS_WEBHOOK_PAYLOAD");
  });
});

describe("hostile payloads", () => {
  it("get a Zulip error or a success, never a server error", async () => {
    const bodies = [
      "", "null", "[]", '"text"', "{}", "[".repeat(5000) + "]".repeat(5000), '{"text": {"a": 1}}', '{"alerts": [null]}',
      '{"alerts": [{"status": 1}]}', '{"alerts": [{"status": "firing", "labels": [1], "annotations": "x", "generatorURL": 5}]}',
      '{"blocks": [{"type": "section", "fields": [{"text": 1}]}]}', '{"attachments": [{"fields": "x"}]}', '{"attachments": [{"title": ["x"]}]}',
      JSON.stringify({ text: "*".repeat(100_000) + "_~<".repeat(50_000), channel: "x".repeat(500) }), "\u0000", '{"text": "a\u0000b"}',
    ];
    for (const name of ["json", "slack_incoming", "alertmanager"]) {
      for (const body of bodies) {
        const res = await hook(name, { api_key: bot.api_key, stream: org.channels.public.name, topic: "hostile" }, body);
        expect(res.status, `${name} ${body.slice(0, 80)}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
        expect(res.body.result, `${name} ${body.slice(0, 80)}`).toMatch(/^(success|error)$/);
      }
    }
  });
});

describe("who may post through an integration URL", () => {
  it("refuses a missing or wrong key with 401", async () => {
    const missing = await hook("json", { stream: org.channels.public.name }, "{}");
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ result: "error", code: "UNAUTHORIZED", msg: "Not logged in: API authentication or user session required" });
    const wrong = await hook("json", { api_key: "x".repeat(32), stream: org.channels.public.name }, "{}");
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ result: "error", code: "INVALID_API_KEY", msg: "Invalid API key" });
  });

  it("refuses a person's key: integration URLs are for bots", async () => {
    const res = await hook("json", { api_key: org.users.member.api_key, stream: org.channels.public.name, topic: "human" }, "{}");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Integration URLs take a bot's API key" });
    expect(await topicMessages(org.users.member, org.channels.public.name, "human")).toEqual([]);
  });

  it("never reaches another organization's channel, by name or by id", async () => {
    const name = "org two alerts";
    ok(await as(org2.users.owner).post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name }]) }));
    const theirs = ok(await as(org2.users.owner).get("/get_stream_id", { stream: name })).stream_id as number;
    const byName = await hook("json", { api_key: bot.api_key, stream: name, topic: "leak" }, '{"secret": 1}');
    expect(byName.status).toBe(400);
    expect(byName.body).toMatchObject({ code: "STREAM_DOES_NOT_EXIST", msg: `Channel '${name}' does not exist` });
    const byId = await hook("json", { api_key: bot.api_key, stream: String(theirs), topic: "leak" }, '{"secret": 1}');
    expect(byId.status).toBe(400);
    expect(byId.body).toMatchObject({ code: "STREAM_DOES_NOT_EXIST", msg: `Channel with ID '${theirs}' does not exist` });
    expect(await topicMessages(org2.users.owner, name, "leak")).toEqual([]);
  });
});

describe("register", () => {
  it("lists the integrations in realm_incoming_webhook_bots, in Zulip's shape", async () => {
    const state = ok(await as(org.users.member).post("/register", { fetch_event_types: JSON.stringify(["realm_incoming_webhook_bots"]) }));
    const integrations = state.realm_incoming_webhook_bots as unknown[];
    for (const integration of integrations) IncomingWebhookIntegration.parse(integration);
    expect(integrations).toContainEqual({ name: "json", display_name: "JSON formatter", all_event_types: null, config_options: [] });
    expect(integrations).toContainEqual(expect.objectContaining({ name: "slack_incoming", all_event_types: null }));
    expect(integrations).toContainEqual(expect.objectContaining({ name: "alertmanager", all_event_types: ["firing", "resolved"] }));
    await as(org.users.member).delete("/events", { queue_id: state.queue_id });
  });
});
