import { AmqpClient, createLogger, OutboxRelay } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeAlertWords } from "../src/consumers/alert-words";
import { consumeMutedUsers } from "../src/consumers/muted-users";
import { selectAlertWords } from "../src/store/alert-words";
import { startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * The effects in messaging of two account features, audited against Zulip: muted users (no
 * missed-message email for their messages; typing still delivered, as Zulip leaves hiding it
 * to clients) and alert words (matched in the message's Markdown, so in code too, as Zulip's
 * preprocessor does). Accounts changes the lists through its public API; the real relay, broker
 * and consumers bring them to messaging.
 */
let m: Messaging;
let org: Org;
let amqp: AmqpClient;
let relay: OutboxRelay;
let accounts: ReturnType<typeof serviceClient>;
let lounge: number;

beforeAll(async () => {
  m = await startMessaging();
  const log = createLogger("account-features-audit", "silent");
  const c = m.deps.config;
  amqp = new AmqpClient(c.AMQP_URL, c.AMQP_EXCHANGE, c.AMQP_QUEUE_PREFIX, log, c.AMQP_QUEUE_EXPIRES_MS);
  await amqp.start();
  await consumeMutedUsers(amqp, m.deps);
  await consumeAlertWords(amqp, m.deps);
  relay = new OutboxRelay({ pool: m.accountsPool, schema: "accounts", amqp, log, pollMs: 50 });
  relay.start();
  accounts = serviceClient(m.accountsApp, c.INTERNAL_TOKEN);
  org = await m.createOrg();
  lounge = await m.createStream(org.owner, "lounge", [org.owner, org.member, org.member2]);
}, 60_000);
afterAll(async () => {
  await relay?.stop();
  await amqp?.close();
  await m?.close();
});

async function eventually(check: () => Promise<boolean>) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("messaging's replica did not catch up");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The messages a user has waiting for a missed-message email. */
async function mailQueued(who: TestUser): Promise<number[]> {
  const { rows } = await m.deps.pool.query("SELECT message_id FROM missed_message_emails WHERE user_id = $1 ORDER BY message_id", [who.user_id]);
  return rows.map((r) => Number(r.message_id));
}

/** Each recipient's flags on the message event of the last send. */
async function flagsOfLastSend(): Promise<Map<number, string[]>> {
  const sent = (await m.clientEvents()).filter((e) => e.type === "messaging.message.sent").at(-1)!;
  return new Map(sent.users.map((u: { id: number; flags: string[] }) => [u.id, u.flags]));
}

describe("muted users", () => {
  beforeAll(async () => {
    await m.ok(await accounts("POST", `/users/me/muted_users/${org.member2.user_id}`, { as: org.member.as }));
    await eventually(async () => {
      const { rows } = await m.deps.pool.query("SELECT muted_user_ids FROM muted_users WHERE user_id = $1", [org.member.user_id]);
      return (rows[0]?.muted_user_ids ?? []).map(Number).includes(org.member2.user_id);
    });
  });

  // Zulip gives a muted sender's messages no email or push notification at all.
  it("a direct message or a mention from a muted user queues no missed-message email; the same from others does", async () => {
    await m.send(org.member2, { type: "private", to: JSON.stringify([org.member.user_id]), content: "are you there?" });
    await m.send(org.member2, { type: "stream", to: lounge, topic: "t", content: "@**Mel Member** and @**Olivia Owner**, look" });
    expect(await mailQueued(org.member)).toEqual([]);
    expect((await mailQueued(org.owner)).length).toBe(1);

    const fromOwner = await m.send(org.owner, { type: "private", to: JSON.stringify([org.member.user_id]), content: "ping" });
    expect(await mailQueued(org.member)).toEqual([fromOwner]);
  });

  // Zulip's server sends typing notices from a muted user as from anyone; clients hide them.
  it("typing from a muted user still reaches the user who muted them", async () => {
    await m.clientEvents();
    await m.ok(await m.call("POST", "/typing", org.member2, { op: "start", to: JSON.stringify([org.member.user_id]) }));
    const typing = (await m.clientEvents()).filter((e) => e.event.type === "typing");
    expect(typing.map((e) => e.event.sender.user_id)).toEqual([org.member2.user_id]);
    expect(typing[0].users).toContain(org.member.user_id);
  });
});

describe("has_alert_word", () => {
  beforeAll(async () => {
    await m.ok(await accounts("POST", "/users/me/alert_words", { as: org.owner.as, params: { alert_words: JSON.stringify(["deploy", "Café"]) } }));
    await eventually(async () => ((await selectAlertWords(m.deps.pool, org.realmId, [org.owner.user_id])).get(org.owner.user_id) ?? []).length === 2);
  });

  const alerted = async (content: string) => {
    await m.send(org.member, { type: "stream", to: lounge, topic: "alerts", content });
    return (await flagsOfLastSend()).get(org.owner.user_id)!.includes("has_alert_word");
  };

  // Zulip matches the Markdown source, not the rendered text: code and link text count.
  it("matches in the Markdown source: code, link text, non-ASCII words in any case", async () => {
    for (const content of ["`deploy`", "```\ndeploy now\n```", "see [deploy](https://example.com/x)", "un CAFÉ, merci", "(deploy)"]) {
      expect(await alerted(content), content).toBe(true);
    }
  });

  it("not inside a word, a URL or other punctuation Zulip does not allow around a word", async () => {
    for (const content of ["https://example.com/deploy", "_deploy_", "deploy-bot", "cafés", "#deploy"]) {
      expect(await alerted(content), content).toBe(false);
    }
  });
});
