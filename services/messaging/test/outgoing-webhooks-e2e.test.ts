import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoOrg, DemoUser } from "@chat/testkit";
import { ok, sleep, until, useDemoStack } from "@chat/testkit/e2e";

/**
 * Outgoing webhook bots end to end: a bot made through POST /bots with a payload URL (a local
 * HTTP server the test controls), triggered by a mention in a channel and by a direct message,
 * answering where it was asked; and the failures Zulip reports ("Failure! ...", and the details
 * to the bot's owner in a direct message from the bot).
 */

interface Hit {
  body: any;
  contentType: string;
  userAgent: string;
}
const hits: Hit[] = [];
/** How the bot's server answers the next request: status and body text. */
let answer: { status: number; body: string; headers?: Record<string, string> } | "hang" = { status: 200, body: JSON.stringify({ content: "pong" }) };
let server: http.Server;
let hookUrl = "";

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const contentType = String(req.headers["content-type"]);
      hits.push({ body: contentType.includes("json") ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text)), contentType, userAgent: String(req.headers["user-agent"]) });
      if (answer === "hang") return; // the bot's server never answers
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

let org: DemoOrg;
const e2e = useDemoStack(
  { serviceEnv: { messaging: { OUTGOING_WEBHOOK_POLL_SECONDS: "1", OUTGOING_WEBHOOK_RETRY_MS: "50", OUTGOING_WEBHOOK_TIMEOUT_SECONDS: "1", OUTGOING_WEBHOOK_PRIVATE_ADDRESSES: "true" } } },
  ({ demo }) => {
    [org] = demo.orgs;
  },
);
const as = (u: DemoUser) => e2e.as(u);

let bot: { user_id: number; full_name: string; email: string };
let slackBot: { user_id: number; full_name: string };

async function makeBot(owner: DemoUser, short: string, name: string, extra: Record<string, unknown> = {}) {
  const made = ok(await as(owner).post("/bots", { full_name: name, short_name: short, bot_type: 3, payload_url: JSON.stringify(hookUrl), ...extra }));
  return { user_id: made.user_id as number, full_name: name, email: ok(await as(owner).get(`/users/${made.user_id}`)).user.email as string };
}

/** The newest messages of a channel topic, raw Markdown. */
async function topicMessages(topic: string) {
  const narrow = JSON.stringify([{ operator: "channel", operand: org.channels.public.name }, { operator: "topic", operand: topic }]);
  return ok(await as(org.users.member).get("/messages", { anchor: "newest", num_before: 20, num_after: 0, narrow, apply_markdown: false })).messages as any[];
}

async function hitsAfter(n: number, count = 1) {
  return until(`${count} webhook request(s)`, async () => (hits.length >= n + count ? hits.slice(n) : null), { timeoutMs: 15_000 });
}

describe("an outgoing webhook bot", () => {
  beforeAll(async () => {
    bot = await makeBot(org.users.member, "echo", "Echo Bot");
    slackBot = await makeBot(org.users.member, "slacky", "Slacky Bot", { interface_type: 2 });
  });

  it("is told of a mention in a channel in Zulip's format, and its answer is posted in the topic by the bot", async () => {
    answer = { status: 200, body: JSON.stringify({ content: "pong" }) };
    const before = hits.length;
    const sent = ok(await as(org.users.member).post("/messages", { type: "stream", to: org.channels.public.name, topic: "hooks", content: `@**${bot.full_name}** ping` }));
    const [hit] = await hitsAfter(before);
    expect(hit.contentType).toBe("application/json");
    expect(hit.userAgent).toMatch(/^ZulipOutgoingWebhook\//);
    expect(hit.body).toMatchObject({ data: `@**${bot.full_name}** ping`, trigger: "mention", bot_email: bot.email, bot_full_name: bot.full_name, token: expect.stringMatching(/^[A-Za-z0-9]{32}$/) });
    expect(hit.body.message).toMatchObject({
      id: sent.id,
      type: "stream",
      stream_id: org.channels.public.stream_id,
      subject: "hooks",
      content: `@**${bot.full_name}** ping`,
      sender_id: org.users.member.user_id,
      rendered_content: expect.stringContaining('class="user-mention"'),
    });
    expect(hit.body.message).not.toHaveProperty("flags");
    const reply = await until("the bot's reply", async () => (await topicMessages("hooks")).find((m) => m.sender_id === bot.user_id));
    expect(reply).toMatchObject({ content: "pong", client: "OutgoingWebhookResponse" });
  });

  it("is told of a direct message and answers everyone in the conversation; silent mentions and bots' messages trigger nothing", async () => {
    const before = hits.length;
    ok(await as(org.users.member2).post("/messages", { type: "stream", to: org.channels.public.name, topic: "quiet", content: `@_**${bot.full_name}** no ping` }));
    ok(await as(org.users.bot).post("/messages", { type: "stream", to: org.channels.public.name, topic: "quiet", content: `@**${bot.full_name}** from a bot` }));
    answer = { status: 200, body: JSON.stringify({ content: "hello there" }) };
    ok(await as(org.users.member2).post("/messages", { type: "private", to: JSON.stringify([bot.user_id]), content: "hi bot" }));
    const got = await hitsAfter(before);
    await sleep(500);
    expect(hits.length - before).toBe(1);
    expect(got[0].body).toMatchObject({ trigger: "direct_message", data: "hi bot" });
    const narrow = JSON.stringify([{ operator: "dm", operand: [bot.user_id] }]);
    const dm = await until("the bot's direct answer", async () =>
      (ok(await as(org.users.member2).get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow, apply_markdown: false })).messages as any[]).find((m) => m.sender_id === bot.user_id),
    );
    expect(dm.content).toBe("hello there");
  });

  it("says nothing when no answer is wanted", async () => {
    answer = { status: 200, body: JSON.stringify({ response_not_required: true }) };
    const before = hits.length;
    ok(await as(org.users.member).post("/messages", { type: "stream", to: org.channels.public.name, topic: "silent", content: `@**${bot.full_name}** shh` }));
    await hitsAfter(before);
    await sleep(500);
    expect((await topicMessages("silent")).filter((m) => m.sender_id === bot.user_id)).toEqual([]);
  });

  it("a refusal or a bad answer is reported in the topic and, with the details, to the bot's owner", async () => {
    answer = { status: 500, body: "oops" };
    ok(await as(org.users.member).post("/messages", { type: "stream", to: org.channels.public.name, topic: "broken", content: `@**${bot.full_name}** fail` }));
    const failure = await until("the failure notice", async () => (await topicMessages("broken")).find((m) => m.sender_id === bot.user_id));
    expect(failure.content).toBe("Failure! Third party responded with 500");
    const ownerNarrow = JSON.stringify([{ operator: "dm", operand: [bot.user_id] }]);
    const told = await until("the owner's notice", async () =>
      (ok(await as(org.users.member).get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: ownerNarrow, apply_markdown: false })).messages as any[]).find((m) =>
        m.content.includes("status code *500*"),
      ),
    );
    expect(told.sender_id).toBe(bot.user_id);
    expect(told.content).toMatch(new RegExp(`^\\[A message\\]\\(.*/near/\\d+\\) to your bot @_\\*\\*Echo Bot\\*\\* triggered an outgoing webhook\\.\\nThe webhook got a response with status code \\*500\\*\\.\\nThe response contains the following payload:\\n\`\`\`\\noops\\n\`\`\`$`));

    answer = { status: 200, body: "not json" };
    ok(await as(org.users.member).post("/messages", { type: "stream", to: org.channels.public.name, topic: "garbled", content: `@**${bot.full_name}** garble` }));
    const garbled = await until("the failure notice", async () => (await topicMessages("garbled")).find((m) => m.sender_id === bot.user_id));
    expect(garbled.content).toBe("Failure! Invalid JSON in response");
  });

  it("a redirect is not followed (it could lead past the address check): the bot reports the status", async () => {
    answer = { status: 302, body: "", headers: { location: `${hookUrl}/elsewhere` } };
    const before = hits.length;
    ok(await as(org.users.member).post("/messages", { type: "stream", to: org.channels.public.name, topic: "redirected", content: `@**${bot.full_name}** go` }));
    const failure = await until("the failure notice", async () => (await topicMessages("redirected")).find((m) => m.sender_id === bot.user_id));
    expect(failure.content).toBe("Failure! Third party responded with 302");
    expect(hits.length - before).toBe(1);
  });

  it("an unanswered request is tried four times in all, then the bot is reported unavailable", async () => {
    answer = "hang";
    const before = hits.length;
    ok(await as(org.users.member).post("/messages", { type: "stream", to: org.channels.public.name, topic: "hanging", content: `@**${bot.full_name}** hello?` }));
    const unavailable = await until("the unavailable notice", async () => (await topicMessages("hanging")).find((m) => m.sender_id === bot.user_id), { timeoutMs: 30_000 });
    expect(unavailable.content).toBe("Failure! Bot is unavailable");
    expect(hits.length - before).toBe(4);
    answer = { status: 200, body: JSON.stringify({ content: "pong" }) };
  });

  it("a Slack-format bot gets Slack's form and answers with `text`; it cannot take direct messages", async () => {
    answer = { status: 200, body: JSON.stringify({ text: "slack pong" }) };
    const before = hits.length;
    ok(await as(org.users.member).post("/messages", { type: "stream", to: org.channels.public.name, topic: "slack", content: `@**${slackBot.full_name}** hi` }));
    const [hit] = await hitsAfter(before);
    expect(hit.contentType).toBe("application/x-www-form-urlencoded");
    expect(hit.body).toMatchObject({ channel_id: `C${org.channels.public.stream_id}`, channel_name: org.channels.public.name, user_id: `U${org.users.member.user_id}`, text: `@**${slackBot.full_name}** hi`, trigger_word: "mention", service_id: String(slackBot.user_id) });
    const reply = await until("the bot's reply", async () => (await topicMessages("slack")).find((m) => m.sender_id === slackBot.user_id));
    expect(reply.content).toBe("slack pong");

    ok(await as(org.users.member2).post("/messages", { type: "private", to: JSON.stringify([slackBot.user_id]), content: "hi" }));
    const narrow = JSON.stringify([{ operator: "dm", operand: [slackBot.user_id] }]);
    const dm = await until("the failure notice", async () =>
      (ok(await as(org.users.member2).get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow, apply_markdown: false })).messages as any[]).find((m) => m.sender_id === slackBot.user_id),
    );
    expect(dm.content).toBe("Failure! Slack outgoing webhooks don't support direct messages.");
  });

  it("is not told of a mention in a private channel it cannot read", async () => {
    const before = hits.length;
    ok(await as(org.users.admin).post("/messages", { type: "stream", to: org.channels.private.name, topic: "secret", content: `@**${bot.full_name}** secret` }));
    // A later trigger shows the earlier one was skipped: deliveries go out in order.
    ok(await as(org.users.member).post("/messages", { type: "stream", to: org.channels.public.name, topic: "after", content: `@**${bot.full_name}** marker` }));
    const got = await hitsAfter(before);
    await sleep(500);
    expect(hits.slice(before).map((h) => h.body.data)).toEqual([`@**${bot.full_name}** marker`]);
    expect(got[0].body.data).not.toContain("secret");
  });
});
