import { identityHeaders, type Identity } from "@chat/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMessaging, type Messaging, type Org } from "./helpers";

/**
 * Integration URLs in messaging: any user's key (a person's posts as them, and to themself
 * without a channel), a channel that cannot be posted to (a success, and one notice an hour from
 * the notification bot to the key's owner) and payloads posted as forms. The clock is moved to
 * test the notices' interval. Through the gateway: integrations-e2e.test.ts.
 */

let m: Messaging;
let org: Org;
let org2: Org;
let notificationBot: number;
let theirs: number;

interface Hook {
  status: number;
  body: any;
}

/** A POST to an integration URL as `who` (the gateway has checked the key): the body raw, JSON unless said otherwise. */
async function hook(who: Identity, name: string, query: Record<string, string>, payload: string | Buffer, headers: Record<string, string> = {}): Promise<Hook> {
  const res = await m.app.inject({
    method: "POST",
    url: `/api/v1/external/${name}?${new URLSearchParams(query)}`,
    headers: { ...identityHeaders(who, m.deps.config.INTERNAL_TOKEN), "content-type": "application/json", ...headers },
    payload,
  });
  return { status: res.statusCode, body: res.json() };
}

const succeeded = (res: Hook) => expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { result: "success", msg: "" } });

/** The newest messages `viewer` sees (raw Markdown), newest last. */
async function newest(viewer: Org["member"], narrow: unknown[], count = 10): Promise<any[]> {
  const res = await m.ok(await m.call("GET", "/messages", viewer, { anchor: "newest", num_before: count, num_after: 0, narrow: JSON.stringify(narrow), apply_markdown: false }));
  return res.messages;
}

/** The notification bot's direct messages to `user`. */
const notices = async (user: Org["member"]) => (await newest(user, [{ operator: "dm", operand: [notificationBot] }], 50)).filter((msg) => msg.sender_id === notificationBot);

/** A multipart form body with these text fields. */
function multipart(fields: Record<string, string>): { body: Buffer; type: string } {
  const boundary = "----chat-test-boundary";
  const parts = Object.entries(fields).map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  return { body: Buffer.from(parts.join("") + `--${boundary}--\r\n`), type: `multipart/form-data; boundary=${boundary}` };
}

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  org2 = await m.createOrg();
  await m.createStream(org.owner, "alerts", [org.owner, org.member, org.member2]);
  theirs = await m.createStream(org2.owner, "their alerts", [org2.owner]);
  const { rows } = await m.accountsPool.query("SELECT notification_bot_id FROM realms WHERE id = $1", [org.realmId]);
  notificationBot = Number(rows[0].notification_bot_id);
});
afterAll(async () => m?.close());

describe("a person's key", () => {
  it("posts in the channel as them, with the integration's client", async () => {
    succeeded(await hook(org.member2.as, "json", { stream: "alerts", topic: "by hand" }, '{"n": 1}'));
    const [message] = await newest(org.member, [{ operator: "channel", operand: "alerts" }, { operator: "topic", operand: "by hand" }]);
    expect(message).toMatchObject({ sender_id: org.member2.user_id, client: "ZulipJSONWebhook", content: '```json\n{\n  "n": 1\n}\n```' });
  });

  it("without a channel, sends them a direct message to themself", async () => {
    succeeded(await hook(org.member2.as, "json", {}, '{"to": "me"}'));
    const [message] = await newest(org.member2, [{ operator: "dm", operand: [org.member2.user_id] }], 1);
    expect(message).toMatchObject({ type: "private", sender_id: org.member2.user_id, content: '```json\n{\n  "to": "me"\n}\n```' });
    expect(message.display_recipient.map((r: any) => r.id)).toEqual([org.member2.user_id]);
  });
});

describe("a channel the key's user cannot post to", () => {
  it("answers success, posts nothing, and has the notification bot tell the bot's owner once an hour", async () => {
    const before = await m.count("messages");
    succeeded(await hook(org.bot.as, "github", { stream: "nowhere" }, JSON.stringify({ zen: "x", hook: { events: [] }, repository: { name: "chat", html_url: "https://github.com/acme/chat" } }), { "x-github-event": "ping" }));
    const [notice] = await notices(org.member);
    expect(notice).toMatchObject({ type: "private", sender_id: notificationBot });
    expect(notice.content).toContain(`A GitHub notification for your bot @_**Bo Bot|${org.bot.user_id}** was dropped`);
    expect(notice.content).toContain("names the channel `nowhere` in `stream`");
    expect(await m.count("messages")).toBe(before + 1);

    // More of them within the hour: still a success, and no more notices.
    m.clock.advance(30 * 60_000);
    succeeded(await hook(org.bot.as, "json", { stream: "nowhere" }, "{}"));
    succeeded(await hook(org.bot.as, "json", { stream: "elsewhere" }, "{}"));
    expect(await notices(org.member)).toHaveLength(1);
    expect(await m.count("messages")).toBe(before + 1);

    // A person's own key has its own notices, to themself.
    succeeded(await hook(org.member2.as, "grafana", { stream: "nowhere" }, JSON.stringify({ state: "ok", ruleName: "R" })));
    const [own] = await notices(org.member2);
    expect(own.content).toContain("A Grafana notification sent with your API key was dropped");

    m.clock.advance(31 * 60_000);
    succeeded(await hook(org.bot.as, "json", { stream: "elsewhere" }, "{}"));
    const after = await notices(org.member);
    expect(after).toHaveLength(2);
    expect(after[1].content).toContain("names the channel `elsewhere` in `stream`");
  });

  it("is another organization's channel as well, by name or id: nothing reaches it", async () => {
    m.clock.advance(2 * 3600_000);
    succeeded(await hook(org.bot.as, "json", { stream: String(theirs), topic: "leak" }, '{"secret": 1}'));
    expect((await notices(org.member)).at(-1).content).toContain(`names the channel with ID \`${theirs}\` in \`stream\``);
    succeeded(await hook(org.bot.as, "json", { stream: "their alerts", topic: "leak" }, '{"secret": 1}'));
    expect(await newest(org2.owner, [{ operator: "channel", operand: "their alerts" }])).toEqual([]);
  });
});

describe("payloads a tool posts as a form", () => {
  it("read a multipart form's `payload` field", async () => {
    const form = multipart({ payload: '{"from": "multipart"}' });
    succeeded(await hook(org.bot.as, "json", { stream: "alerts", topic: "forms" }, form.body, { "content-type": form.type }));
    const ghForm = multipart({ payload: JSON.stringify({ action: "created", sender: { login: "cy" }, repository: { name: "chat", full_name: "acme/chat", html_url: "https://github.com/acme/chat" } }) });
    succeeded(await hook(org.bot.as, "github", { stream: "alerts", topic: "forms" }, ghForm.body, { "content-type": ghForm.type, "x-github-event": "star" }));
    const messages = await newest(org.member, [{ operator: "channel", operand: "alerts" }, { operator: "topic", operand: "forms" }]);
    expect(messages.map((msg) => msg.content)).toEqual(['```json\n{\n  "from": "multipart"\n}\n```', "**cy** starred [acme/chat](https://github.com/acme/chat)."]);
  });

  it("read a urlencoded form's `payload` field (GitHub's form content type)", async () => {
    const form = new URLSearchParams({ payload: JSON.stringify({ state: "alerting", ruleName: "Disk", message: "90% & rising" }) }).toString();
    succeeded(await hook(org.bot.as, "grafana", { stream: "alerts" }, form, { "content-type": "application/x-www-form-urlencoded" }));
    const [message] = await newest(org.member, [{ operator: "channel", operand: "alerts" }, { operator: "topic", operand: "Disk" }]);
    expect(message.content).toBe(":fire: **Alerting**: **Disk**\n\n90% & rising");
  });

  it("refuse a multipart form without `payload`", async () => {
    const form = multipart({ other: "{}" });
    const res = await hook(org.bot.as, "json", { stream: "alerts" }, form.body, { "content-type": form.type });
    expect(res).toEqual({ status: 400, body: { result: "error", msg: "Missing 'payload' argument", code: "REQUEST_VARIABLE_MISSING", var_name: "payload" } });
  });
});

describe("a third party's text in a payload", () => {
  /** The newest message of a topic of #alerts as member2 gets it: rendered, with their flags. */
  async function postedAs(topic: string): Promise<{ html: string; flags: string[] }> {
    const narrow = JSON.stringify([{ operator: "channel", operand: "alerts" }, { operator: "topic", operand: topic }]);
    const [message] = (await m.ok(await m.call("GET", "/messages", org.member2, { anchor: "newest", num_before: 1, num_after: 0, narrow }))).messages;
    return { html: message.content, flags: message.flags };
  }
  const mentionsNobody = (posted: { html: string; flags: string[] }) => {
    expect(posted.html).not.toContain("user-mention");
    expect(posted.flags).not.toContain("wildcard_mentioned");
  };
  const repository = { name: "chat", full_name: "acme/chat", html_url: "https://github.com/acme/chat" };

  it("mentions nobody: a backslash before `@**all**` in a comment, a URL with a line break, an alert's labels", async () => {
    const comment = {
      action: "created",
      issue: { number: 3, title: "Pings", html_url: "https://github.com/acme/chat/issues/3" },
      comment: { html_url: "https://github.com/acme/chat/issues/3#c", body: "\\@**all** look" },
      sender: { login: "eve" },
      repository,
    };
    succeeded(await hook(org.bot.as, "github", { stream: "alerts", topic: "comment" }, JSON.stringify(comment), { "x-github-event": "issue_comment" }));
    mentionsNobody(await postedAs("comment"));

    const grafana = { status: "firing", title: "Load", alerts: [{ status: "firing", labels: { alertname: "Load" }, generatorURL: "https://grafana.example/a\n\n@**all**" }] };
    succeeded(await hook(org.bot.as, "grafana", { stream: "alerts", topic: "grafana" }, JSON.stringify(grafana)));
    mentionsNobody(await postedAs("grafana"));

    const alert = { status: "firing", labels: { instance: "web1", alertname: "Up\r@**all**" }, annotations: {}, generatorURL: "http://prom.example/g)\n\n@*everyone*" };
    succeeded(await hook(org.bot.as, "alertmanager", { stream: "alerts", topic: "alertmanager" }, JSON.stringify({ alerts: [alert] })));
    mentionsNobody(await postedAs("alertmanager"));
  });

  it("an Alertmanager URL's `name` or `desc` naming an object's built-in property finds no such label", async () => {
    const alert = { status: "firing", labels: { instance: "web1" } };
    succeeded(await hook(org.bot.as, "alertmanager", { stream: "alerts", name: "__proto__" }, JSON.stringify({ alerts: [alert] })));
    succeeded(await hook(org.bot.as, "alertmanager", { stream: "alerts", name: "instance", desc: "constructor" }, JSON.stringify({ alerts: [alert] })));
    const messages = await newest(org.member, [{ operator: "channel", operand: "alerts" }], 2);
    expect(messages.map((msg) => [msg.subject, msg.content])).toEqual([
      ["(unknown)", ":rotating_light: **FIRING** <missing field: alertname>"],
      ["web1", ":rotating_light: **FIRING** <missing field: constructor>"],
    ]);
  });
});
