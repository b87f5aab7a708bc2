import { AmqpClient, createLogger, OutboxRelay, withTx } from "@chat/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doAddAlertWords, doRemoveAlertWords } from "../../accounts/src/actions/alert-words";
import { loadAccountsConfig } from "../../accounts/src/config";
import type { AccountsDeps } from "../../accounts/src/deps";
import { doReplicateAlertWords } from "../src/actions/alert-words";
import { consumeAlertWords } from "../src/consumers/alert-words";
import { selectAlertWords } from "../src/store/alert-words";
import { startMessaging, type Messaging, type Org } from "./helpers";

/**
 * has_alert_word: accounts changes a user's alert words and publishes them through its outbox;
 * messaging's consumer keeps the replica the send path reads. Real relay, broker and consumer.
 */
let m: Messaging;
let org: Org;
let accounts: AccountsDeps;
let amqp: AmqpClient;
let relay: OutboxRelay;
let stream: number;

beforeAll(async () => {
  m = await startMessaging();
  const log = createLogger("alert-words-test", "silent");
  accounts = { pool: m.accountsPool, config: loadAccountsConfig(m.env.vars), clock: m.clock, log };
  const c = m.deps.config;
  amqp = new AmqpClient(c.AMQP_URL, c.AMQP_EXCHANGE, c.AMQP_QUEUE_PREFIX, log, c.AMQP_QUEUE_EXPIRES_MS);
  await amqp.start();
  await consumeAlertWords(amqp, m.deps);
  relay = new OutboxRelay({ pool: m.accountsPool, schema: "accounts", amqp, log, pollMs: 50 });
  relay.start();
  org = await m.createOrg();
  stream = await m.createStream(org.owner, "ops", [org.owner, org.member, org.member2]);
});
afterAll(async () => {
  await relay?.stop();
  await amqp?.close();
  await m?.close();
});

/** Waits (briefly) until messaging's replica holds `words` for the user. */
async function replicated(userId: number, words: string[]) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = (await selectAlertWords(m.deps.pool, org.realmId, [userId])).get(userId) ?? [];
    if (JSON.stringify(got) === JSON.stringify(words) || Date.now() > deadline) return expect(got).toEqual(words);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Each recipient's flags on the message event of the last send. */
async function flagsOfLastSend(): Promise<Map<number, string[]>> {
  const sent = (await m.clientEvents()).filter((e) => e.type === "messaging.message.sent").at(-1)!;
  return new Map(sent.users.map((u: { id: number; flags: string[] }) => [u.id, u.flags]));
}

describe("has_alert_word", () => {
  it("is set for recipients whose alert words the message contains, as whole words", async () => {
    await doAddAlertWords(accounts, org.member.as, ["deploy"]);
    await doAddAlertWords(accounts, org.member2.as, ["Outage", "on call"]);
    await replicated(org.member.user_id, ["deploy"]);
    await replicated(org.member2.user_id, ["Outage", "on call"]);
    await m.clientEvents();

    const id = await m.send(org.owner, { type: "stream", to: stream, topic: "status", content: "The **DEPLOY** is done; no outage." });
    let flags = await flagsOfLastSend();
    expect(flags.get(org.member.user_id)).toContain("has_alert_word");
    expect(flags.get(org.member2.user_id)).toContain("has_alert_word");
    expect(flags.get(org.owner.user_id)).not.toContain("has_alert_word");

    await m.send(org.owner, { type: "stream", to: stream, topic: "status", content: "redeploy of the outage-monitor" });
    flags = await flagsOfLastSend();
    expect([...flags.values()].some((f) => f.includes("has_alert_word"))).toBe(false);

    // The flag is stored: the `is:alerted` narrow finds the message for that user only.
    const alerted = await m.ok(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 10, num_after: 0, narrow: [["is", "alerted"]] }));
    expect(alerted.messages.map((x: { id: number }) => x.id)).toEqual([id]);
    expect(alerted.messages[0].flags).toContain("has_alert_word");
    const none = await m.ok(await m.call("GET", "/messages", org.owner, { anchor: "newest", num_before: 10, num_after: 0, narrow: [["is", "alerted"]] }));
    expect(none.messages).toEqual([]);
  });

  it("works in direct messages and for phrases", async () => {
    await m.send(org.owner, { type: "private", to: [org.member2.user_id], content: "Are you on call tonight?" });
    expect((await flagsOfLastSend()).get(org.member2.user_id)).toContain("has_alert_word");
  });

  it("follows changes to the list", async () => {
    await doRemoveAlertWords(accounts, org.member.as, ["DEPLOY"]);
    await replicated(org.member.user_id, []);
    await m.send(org.owner, { type: "stream", to: stream, topic: "status", content: "deploy again" });
    expect((await flagsOfLastSend()).get(org.member.user_id)).not.toContain("has_alert_word");
  });

  it("never goes back to an older list", async () => {
    await withTx(m.deps.pool, (tx) => doReplicateAlertWords(tx, org.realmId, org.member2.user_id, ["stale"], 1));
    expect((await selectAlertWords(m.deps.pool, org.realmId, [org.member2.user_id])).get(org.member2.user_id)).toEqual(["Outage", "on call"]);
  });
});
