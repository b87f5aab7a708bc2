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

describe("GitHub (/external/github)", () => {
  const repository = { name: "chat", full_name: "acme/chat", html_url: "https://github.com/acme/chat" };
  const github = (event: string, query: Record<string, string>, payload: unknown) =>
    hook("github", { api_key: bot.api_key, stream: org.channels.public.name, ...query }, JSON.stringify(payload), { "content-type": "application/json", "x-github-event": event });
  const push = (branch: string, message: string) => ({
    ref: `refs/heads/${branch}`,
    compare: "https://github.com/acme/chat/compare/a...b",
    pusher: { name: "ana" },
    sender: { login: "ana" },
    repository,
    commits: [{ id: "0123456789abcdef", message, url: "https://github.com/acme/chat/commit/0123456789abcdef", author: { username: "ana" } }],
  });

  it("posts a push in '<repo> / <branch>', only of the branches whose names occur in `branches` (as Zulip tests them)", async () => {
    succeeded(await github("push", { branches: "main,release" }, push("main", "Fix the build\n\nDetails")));
    succeeded(await github("push", { branches: "main,release" }, push("wip", "Not posted")));
    // Zulip's test is `branches.find(branch)`: "lease" occurs in "main,release".
    succeeded(await github("push", { branches: "main,release" }, push("lease", "Posted, as in Zulip")));
    expect((await topicMessages(org.users.member, org.channels.public.name, "chat / lease")).map((m) => m.content)).toEqual([
      "**ana** pushed 1 commit to the branch [lease](https://github.com/acme/chat/compare/a...b):\n* Posted, as in Zulip ([0123456](https://github.com/acme/chat/commit/0123456789abcdef))",
    ]);
    const [message] = await topicMessages(org.users.member, org.channels.public.name, "chat / main");
    expect(message).toMatchObject({
      sender_id: bot.user_id,
      client: "ZulipGitHubWebhook",
      content: "**ana** pushed 1 commit to the branch [main](https://github.com/acme/chat/compare/a...b):\n* Fix the build ([0123456](https://github.com/acme/chat/commit/0123456789abcdef))",
    });
    expect(await topicMessages(org.users.member, org.channels.public.name, "chat / wip")).toEqual([]);
  });

  it("posts a pull request in its own topic, filtered by event type; an event it does not handle is a 200", async () => {
    const pr = (action: string) => ({
      action,
      number: 5,
      pull_request: { number: 5, title: "Faster sends", html_url: "https://github.com/acme/chat/pull/5", user: { login: "ana" }, body: "", head: { ref: "fast" }, base: { ref: "main" }, merged: false },
      sender: { login: "ana" },
      repository,
    });
    const onlyOpened = { only_events: '["opened_pull_request"]' };
    succeeded(await github("pull_request", onlyOpened, pr("opened")));
    succeeded(await github("pull_request", onlyOpened, pr("closed")));
    const messages = await topicMessages(org.users.member, org.channels.public.name, "chat / PR #5 Faster sends");
    expect(messages.map((m) => m.content)).toEqual(["**ana** opened the pull request [#5 Faster sends](https://github.com/acme/chat/pull/5) to merge `fast` into `main`."]);
    const unsupported = await github("gollum", {}, { pages: [], sender: { login: "ana" }, repository });
    expect(unsupported).toEqual({ status: 200, body: { result: "success", code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE", msg: "The 'gollum' event isn't currently supported by the GitHub webhook; ignoring" } });
  });

  it("flattens a title's line breaks and control characters into the topic instead of refusing it", async () => {
    const pr = (action: string, extra: Record<string, unknown> = {}) => ({
      action,
      number: 8,
      pull_request: { number: 8, title: "Retry sends\r\nwhen the\tqueue is\u0007 full", html_url: "https://github.com/acme/chat/pull/8", user: { login: "ana" }, body: "", head: { ref: "retry" }, base: { ref: "main" } },
      sender: { login: "ana" },
      repository,
      ...extra,
    });
    succeeded(await github("pull_request", {}, pr("opened")));
    succeeded(await github("pull_request", {}, pr("ready_for_review")));
    const messages = await topicMessages(org.users.member, org.channels.public.name, "chat / PR #8 Retry sends when the queue is full");
    expect(messages.map((m) => m.content)).toEqual([
      "**ana** opened the pull request [#8 Retry sends when the\tqueue is\u0007 full](https://github.com/acme/chat/pull/8) to merge `retry` into `main`.",
      "**ana** marked the pull request [#8 Retry sends when the\tqueue is\u0007 full](https://github.com/acme/chat/pull/8) as ready for review.",
    ]);
    // Every integration's topics: a Slack channel's too.
    succeeded(await hook("slack_incoming", { api_key: bot.api_key, stream: org.channels.public.name }, JSON.stringify({ channel: "#ops\nalerts", text: "disk full" })));
    expect((await topicMessages(org.users.member, org.channels.public.name, "ops alerts")).map((m) => m.content)).toEqual(["disk full"]);
  });

  it("posts reviews, review comments, review requests and readiness in the pull request's topic", async () => {
    const pull_request = { number: 9, title: "Faster typing", html_url: "https://github.com/acme/chat/pull/9", user: { login: "ana" }, head: { ref: "typing", sha: "9f8e7d6c5b4a" }, base: { ref: "main" } };
    const PR9 = "[#9 Faster typing](https://github.com/acme/chat/pull/9)";
    const sender = { login: "bob" };
    succeeded(await github("pull_request", {}, { action: "review_requested", number: 9, pull_request, requested_reviewer: { login: "bob" }, sender: { login: "ana" }, repository }));
    succeeded(await github("pull_request", {}, { action: "ready_for_review", number: 9, pull_request, sender: { login: "ana" }, repository }));
    const review = { id: 31, state: "changes_requested", body: "The timer leaks.", html_url: "https://github.com/acme/chat/pull/9#pullrequestreview-31", user: sender, commit_id: "9f8e7d6c5b4a" };
    succeeded(await github("pull_request_review", {}, { action: "submitted", review, pull_request, sender, repository }));
    const comment = { id: 44, path: "web/typing.ts", line: 12, body: "`clearTimeout` here", html_url: "https://github.com/acme/chat/pull/9#discussion_r44", user: sender, commit_id: "9f8e7d6c5b4a" };
    succeeded(await github("pull_request_review_comment", {}, { action: "created", comment, pull_request, sender, repository }));
    const messages = await topicMessages(org.users.member, org.channels.public.name, "chat / PR #9 Faster typing");
    expect(messages.map((m) => m.content)).toEqual([
      `**ana** requested a review from **bob** on the pull request ${PR9}.`,
      `**ana** marked the pull request ${PR9} as ready for review.`,
      `**bob** [requested changes](https://github.com/acme/chat/pull/9#pullrequestreview-31) on the pull request ${PR9}:\n\n~~~ quote\nThe timer leaks.\n~~~`,
      `**bob** [commented](https://github.com/acme/chat/pull/9#discussion_r44) on \`web/typing.ts\` in the pull request ${PR9}:\n\n~~~ quote\n\`clearTimeout\` here\n~~~`,
    ]);
    // Each has its own event type to filter by.
    succeeded(await github("pull_request_review", { exclude_events: '["pull_request_review"]' }, { action: "submitted", review: { ...review, state: "approved" }, pull_request, sender, repository }));
    expect(await topicMessages(org.users.member, org.channels.public.name, "chat / PR #9 Faster typing")).toHaveLength(4);
  });

  it("posts branches and tags created or deleted, forks and commit comments in the repository's topic", async () => {
    const sender = { login: "cy" };
    const topic = "tooling";
    const repo = { name: "tooling", full_name: "acme/tooling", html_url: "https://github.com/acme/tooling" };
    succeeded(await github("create", {}, { ref: "release/2.0", ref_type: "branch", master_branch: "main", pusher_type: "user", sender, repository: repo }));
    succeeded(await github("create", {}, { ref: "v2.0.0", ref_type: "tag", master_branch: "main", pusher_type: "user", sender, repository: repo }));
    succeeded(await github("delete", {}, { ref: "old-ci", ref_type: "branch", pusher_type: "user", sender, repository: repo }));
    succeeded(await github("fork", {}, { forkee: { name: "tooling", full_name: "cy/tooling", html_url: "https://github.com/cy/tooling", fork: true }, sender, repository: repo }));
    const comment = { id: 7, commit_id: "c0ffee1234567890", path: "Makefile", line: 3, body: "Tabs, not spaces", html_url: "https://github.com/acme/tooling/commit/c0ffee1234567890#commitcomment-7", user: sender };
    succeeded(await github("commit_comment", {}, { action: "created", comment, sender, repository: repo }));
    const messages = await topicMessages(org.users.member, org.channels.public.name, topic);
    expect(messages.map((m) => m.content)).toEqual([
      "**cy** created the branch [release/2.0](https://github.com/acme/tooling/tree/release/2.0).",
      "**cy** created the tag [v2.0.0](https://github.com/acme/tooling/releases/tag/v2.0.0).",
      "**cy** deleted the branch `old-ci`.",
      "**cy** forked [acme/tooling](https://github.com/acme/tooling) to [cy/tooling](https://github.com/cy/tooling).",
      "**cy** [commented](https://github.com/acme/tooling/commit/c0ffee1234567890#commitcomment-7) on `Makefile` in the commit [c0ffee1](https://github.com/acme/tooling/commit/c0ffee1234567890):\n\n~~~ quote\nTabs, not spaces\n~~~",
    ]);
    expect(messages.every((m) => m.sender_id === bot.user_id && m.client === "ZulipGitHubWebhook")).toBe(true);
  });

  it("needs the X-GitHub-Event header", async () => {
    const res = await hook("github", { api_key: bot.api_key, stream: org.channels.public.name }, JSON.stringify(push("main", "x")));
    expect(res).toEqual({ status: 400, body: { result: "error", code: "MISSING_HTTP_EVENT_HEADER", msg: "Missing the HTTP event header 'X-GitHub-Event'", header: "X-GitHub-Event" } });
  });
});

describe("Grafana (/external/grafana)", () => {
  it("posts a unified alerting notification as one message, topic its title without the status", async () => {
    const payload = {
      receiver: "chat",
      status: "firing",
      alerts: [{ status: "firing", labels: { alertname: "HighCPU", host: "web-1" }, annotations: { summary: "CPU at 97%" }, generatorURL: "https://grafana.example/alerting/1/view", values: { A: 97 } }],
      commonLabels: { alertname: "HighCPU" },
      externalURL: "https://grafana.example/",
      title: "[FIRING:1] HighCPU (web-1)",
      message: "Grafana's own text",
    };
    succeeded(await hook("grafana", { api_key: bot.api_key, stream: org.channels.public.name }, JSON.stringify(payload)));
    const [message] = await topicMessages(org.users.member, org.channels.public.name, "HighCPU (web-1)");
    expect(message).toMatchObject({
      sender_id: bot.user_id,
      client: "ZulipGrafanaWebhook",
      content: ":fire: **Firing**: 1 alert ([Grafana](https://grafana.example/))\n* **HighCPU**: CPU at 97%\n  host=web-1 · A = 97 · [source](https://grafana.example/alerting/1/view)",
    });
  });
});

describe("a multipart form (as some tools post)", () => {
  it("carries the key and the payload as fields, through the gateway", async () => {
    const form = new FormData();
    form.append("api_key", bot.api_key);
    form.append("payload", JSON.stringify({ from: "a form" }));
    const url = `${e2e.demo.base_url}/api/v1/external/json?${new URLSearchParams({ stream: org.channels.public.name, topic: "multipart" })}`;
    const res = await fetch(url, { method: "POST", body: form });
    succeeded({ status: res.status, body: await res.json() });
    const [message] = await topicMessages(org.users.member, org.channels.public.name, "multipart");
    expect(message).toMatchObject({ sender_id: bot.user_id, content: '```json\n{\n  "from": "a form"\n}\n```' });
  });
});

describe("a large payload (GitHub's go up to megabytes)", () => {
  /** A push of `n` commits with long messages: about 1 kB each once in a form. */
  const bigPush = (n: number) => ({
    ref: "refs/heads/main",
    compare: "https://github.com/acme/chat/compare/a...b",
    pusher: { name: "ana" },
    sender: { login: "ana" },
    repository: { name: "chat", full_name: "acme/chat", html_url: "https://github.com/acme/chat" },
    commits: Array.from({ length: n }, (_, i) => ({
      id: `${i}`.padStart(40, "0"),
      message: `Change ${i}\n\n${"Explains the change at length. ".repeat(25)}`,
      url: `https://github.com/acme/chat/commit/${i}`,
      author: { username: "ana" },
    })),
  });
  const url = (query: Record<string, string>) => `${e2e.demo.base_url}/api/v1/external/github?${new URLSearchParams({ stream: org.channels.public.name, ...query })}`;
  const post = async (target: string, body: BodyInit, headers: Record<string, string> = {}): Promise<Hook> => {
    const res = await fetch(target, { method: "POST", headers: { "x-github-event": "push", ...headers }, body });
    return { status: res.status, body: await res.json() };
  };
  const multipart = (fields: Record<string, string>) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    return form;
  };
  const FORM = { "content-type": "application/x-www-form-urlencoded" };
  const TOO_LARGE = { status: 413, body: { result: "error", code: "REQUEST_TOO_LARGE", msg: "Request body too large" } };

  it("of 1 to 5 MB is posted, in a multipart form as in a urlencoded one, the key in the form or the query string", async () => {
    const payload = JSON.stringify(bigPush(2500));
    expect(payload.length).toBeGreaterThan(2 * 1024 * 1024);
    succeeded(await post(url({ topic: "big multipart" }), multipart({ api_key: bot.api_key, payload })));
    succeeded(await post(url({ topic: "big multipart", api_key: bot.api_key }), multipart({ payload })));
    succeeded(await post(url({ topic: "big form" }), new URLSearchParams({ api_key: bot.api_key, payload }).toString(), FORM));
    succeeded(await post(url({ topic: "big form", api_key: bot.api_key }), new URLSearchParams({ payload }).toString(), FORM));
    for (const topic of ["big multipart", "big form"]) {
      const messages = await topicMessages(org.users.member, org.channels.public.name, topic);
      expect(messages).toHaveLength(2);
      for (const m of messages) expect(m.content.split("\n").at(-1)).toBe("* …and 2490 more commits");
    }
  });

  it("over 5 MB is refused with 413 REQUEST_TOO_LARGE, whatever its form and wherever the key", async () => {
    const payload = JSON.stringify(bigPush(6000));
    expect(payload.length).toBeGreaterThan(5 * 1024 * 1024);
    expect(await post(url({ topic: "huge" }), multipart({ api_key: bot.api_key, payload }))).toEqual(TOO_LARGE);
    expect(await post(url({ topic: "huge", api_key: bot.api_key }), multipart({ payload }))).toEqual(TOO_LARGE);
    expect(await post(url({ topic: "huge" }), new URLSearchParams({ api_key: bot.api_key, payload }).toString(), FORM)).toEqual(TOO_LARGE);
    expect(await post(url({ topic: "huge", api_key: bot.api_key }), payload, { "content-type": "application/json" })).toEqual(TOO_LARGE);
    // Sent in chunks, without a Content-Length to refuse it by: counted as it comes.
    const form = new URLSearchParams({ api_key: bot.api_key, payload }).toString();
    for (const target of [url({ topic: "huge" }), url({ topic: "huge", api_key: bot.api_key })]) {
      const chunked: RequestInit & { duplex: "half" } = { method: "POST", headers: { "x-github-event": "push", ...FORM }, body: new Blob([form]).stream(), duplex: "half" };
      const res = await fetch(target, chunked);
      expect({ status: res.status, body: await res.json() }).toEqual(TOO_LARGE);
    }
    expect(await topicMessages(org.users.member, org.channels.public.name, "huge")).toEqual([]);
  });
});

describe("hostile payloads", () => {
  it("get a Zulip error or a success, never a server error", async () => {
    // A bot of their own: their 184 requests would leave the other bot's rate limit spent.
    const { api_key } = ok(await as(org.users.member).post("/bots", { full_name: "Hostile Hooks", short_name: "hostile-hooks", bot_type: 2 }));
    const bodies = [
      "", "null", "[]", '"text"', "{}", "[".repeat(5000) + "]".repeat(5000), '{"text": {"a": 1}}', '{"alerts": [null]}',
      '{"alerts": [{"status": 1}]}', '{"alerts": [{"status": "firing", "labels": [1], "annotations": "x", "generatorURL": 5}]}',
      '{"blocks": [{"type": "section", "fields": [{"text": 1}]}]}', '{"attachments": [{"fields": "x"}]}', '{"attachments": [{"title": ["x"]}]}',
      JSON.stringify({ text: "*".repeat(100_000) + "_~<".repeat(50_000), channel: "x".repeat(500) }), "\u0000", '{"text": "a\u0000b"}',
      '{"ref": "refs/heads/x", "repository": {"name": "r", "html_url": "u"}, "commits": [null, {"id": 5}]}', '{"action": "opened", "pull_request": {"number": 1e400}}',
      '{"action": "opened", "issue": {"number": 1, "title": "t", "html_url": "u", "body": "@**all** ~~~"}, "repository": {"name": "r"}}',
      '{"state": "alerting", "evalMatches": [{"value": {"a": 1}}, null]}', '{"status": "firing", "alerts": [{"labels": {"alertname": {"x": 1}}, "values": [1]}]}',
      JSON.stringify({ ref: "refs/heads/" + "b".repeat(300), repository: { name: "r".repeat(300), html_url: "u" }, commits: Array.from({ length: 2000 }, (_, i) => ({ id: String(i), url: "u", message: "m".repeat(200) })) }),
    ];
    const github = (event: string) => ({ "content-type": "application/json", "x-github-event": event });
    const targets: Array<[string, Record<string, string>?]> = [["json"], ["slack_incoming"], ["alertmanager"], ["grafana"], ["github", github("push")], ["github", github("pull_request")], ["github", github("issues")], ["github", github("ping")]];
    for (const [name, headers] of targets) {
      for (const body of bodies) {
        const res = await hook(name, { api_key, stream: org.channels.public.name, topic: "hostile" }, body, headers);
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

  it("takes a person's key too, as Zulip does: they post as themself", async () => {
    succeeded(await hook("json", { api_key: org.users.member2.api_key, stream: org.channels.public.name, topic: "human" }, '{"by": "hand"}'));
    const [message] = await topicMessages(org.users.member, org.channels.public.name, "human");
    expect(message).toMatchObject({ sender_id: org.users.member2.user_id, client: "ZulipJSONWebhook", content: '```json\n{\n  "by": "hand"\n}\n```' });
  });

  it("never reaches another organization's channel, by name or by id: a success, and one notice to the bot's owner", async () => {
    const name = "org two alerts";
    ok(await as(org2.users.owner).post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name }]) }));
    const theirs = ok(await as(org2.users.owner).get("/get_stream_id", { stream: name })).stream_id as number;
    // Zulip answers a missing channel with a success (the tool could only retry) and tells the bot's owner.
    succeeded(await hook("json", { api_key: bot.api_key, stream: name, topic: "leak" }, '{"secret": 1}'));
    succeeded(await hook("json", { api_key: bot.api_key, stream: String(theirs), topic: "leak" }, '{"secret": 1}'));
    expect(await topicMessages(org2.users.owner, name, "leak")).toEqual([]);
    const dms = ok(await as(org.users.member).get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: JSON.stringify([{ operator: "is", operand: "dm" }]), apply_markdown: false })).messages;
    const notices = dms.filter((m: any) => m.sender_full_name === "Notification Bot" && m.content.includes("was dropped"));
    // One notice an hour per bot: the first request's.
    expect(notices).toHaveLength(1);
    expect(notices[0].content).toContain(`A JSON formatter notification for your bot @_**CI Hooks|${bot.user_id}** was dropped`);
    expect(notices[0].content).toContain(`names the channel \`${name}\` in \`stream\``);
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
    expect(integrations).toContainEqual(expect.objectContaining({ name: "github", display_name: "GitHub", all_event_types: expect.arrayContaining(["push_commits", "opened_pull_request", "issues"]) }));
    expect(integrations).toContainEqual(expect.objectContaining({ name: "grafana", display_name: "Grafana", all_event_types: expect.arrayContaining(["firing", "alerting"]) }));
    await as(org.users.member).delete("/events", { queue_id: state.queue_id });
  });
});

