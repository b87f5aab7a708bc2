import { AmqpClient, createLogger, InternalClient, OutboxRelay } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenForRealmChanges } from "../src/consumers/realm-cache";
import { AccountsClient } from "../src/lib/accounts-client";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * Organization settings an administrator changes through accounts' PATCH /realm take effect in
 * messaging: the accounts.realm.updated events drop a process's cached settings (through the
 * real relay, broker and listener), and the send and edit paths enforce what was set.
 */
let m: Messaging;
let org: Org;
let other: Org;
let amqp: AmqpClient;
let relay: OutboxRelay;
let accounts: ReturnType<typeof serviceClient>;
/** An accounts client that keeps realm settings for an hour, as a production process may. */
let cached: AccountsClient;

beforeAll(async () => {
  m = await startMessaging();
  const log = createLogger("realm-settings-test", "silent");
  const c = m.deps.config;
  amqp = new AmqpClient(c.AMQP_URL, c.AMQP_EXCHANGE, c.AMQP_QUEUE_PREFIX, log, c.AMQP_QUEUE_EXPIRES_MS);
  await amqp.start();
  cached = new AccountsClient(new InternalClient(c.ACCOUNTS_URL, c.INTERNAL_TOKEN), m.clock, 3_600_000);
  await listenForRealmChanges(amqp, { accounts: cached });
  relay = new OutboxRelay({ pool: m.accountsPool, schema: "accounts", amqp, log, pollMs: 50 });
  relay.start();
  accounts = serviceClient(m.accountsApp, c.INTERNAL_TOKEN);
  org = await m.createOrg();
  other = await m.createOrg();
  await m.createStream(org.owner, "general", [org.owner, org.admin, org.moderator, org.member, org.member2]);
}, 60_000);
afterAll(async () => {
  await relay?.stop();
  await amqp?.close();
  await m?.close();
});

const patchRealm = async (who: TestUser, params: Record<string, unknown>) => m.ok(await accounts("PATCH", "/realm", { as: who.as, params }));

async function eventually(check: () => Promise<boolean>) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("not seen in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("messaging's cached organization settings", () => {
  it("are dropped when accounts announces a change, for the update and the update_dict settings alike", async () => {
    expect((await cached.getRealm(org.realmId)).settings.mandatory_topics).toBe(false);
    // Changed behind accounts' back: the cached copy stays.
    await m.setRealmSetting(org.realmId, "mandatory_topics", true);
    expect((await cached.getRealm(org.realmId)).settings.mandatory_topics).toBe(false);
    await m.setRealmSetting(org.realmId, "mandatory_topics", false);

    await patchRealm(org.admin, { wildcard_mention_policy: 6 });
    await eventually(async () => (await cached.getRealm(org.realmId)).settings.wildcard_mention_policy === 6);
    await patchRealm(org.admin, { allow_message_editing: false });
    await eventually(async () => (await cached.getRealm(org.realmId)).settings.allow_message_editing === false);
    await patchRealm(org.admin, { allow_message_editing: true, wildcard_mention_policy: 5 });
    await eventually(async () => (await cached.getRealm(org.realmId)).settings.allow_message_editing === true);
  });
});

describe("private_message_policy", () => {
  const dm = (from: TestUser, to: TestUser[]) => m.call("POST", "/messages", from, { type: "direct", to: JSON.stringify(to.map((u) => u.user_id)), content: "hi" });

  it("disabled: direct messages are refused, except from a bot or to a single bot; other organizations are unaffected", async () => {
    await m.ok(await dm(org.member, [org.member2]));
    await patchRealm(org.admin, { private_message_policy: 2 });
    try {
      expectError(await dm(org.member, [org.member2]), 400, "BAD_REQUEST", "Direct messages are disabled in this organization.");
      expectError(await dm(org.admin, [org.member, org.bot]), 400, "BAD_REQUEST", "Direct messages are disabled in this organization.");
      await m.ok(await dm(org.member, [org.bot]));
      await m.ok(await dm(org.bot, [org.member]));
      await m.ok(await dm(other.member, [other.member2]));
    } finally {
      await patchRealm(org.admin, { private_message_policy: 1 });
    }
    await m.ok(await dm(org.member, [org.member2]));
  });
});

describe("move time limits", () => {
  const edit = (who: TestUser, id: number, params: Record<string, unknown>) => m.call("PATCH", `/messages/${id}`, who, params);

  it("the organization's limit for moving within a channel applies to members; 'unlimited' lifts it", async () => {
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "limits", content: "x" });
    await patchRealm(org.admin, { move_messages_within_stream_limit_seconds: 3600 });
    m.clock.advance((3600 + 21) * 1000);
    expectError(await edit(org.member, id, { topic: "late" }), 400, "BAD_REQUEST", "The time limit for editing this message's topic has passed.");
    // A whole topic is held to the same limit: only its newer message may move.
    const recent = await m.send(org.member, { type: "stream", to: "general", topic: "limits", content: "y" });
    const res = await edit(org.member, recent, { topic: "late", propagate_mode: "change_all" });
    expectError(res, 400, "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", "You only have permission to move the 1/2 most recent messages in this topic.");
    await patchRealm(org.admin, { move_messages_within_stream_limit_seconds: JSON.stringify("unlimited") });
    m.clock.advance(30 * 86_400_000);
    await m.ok(await edit(org.member, recent, { topic: "much later", propagate_mode: "change_all", send_notification_to_new_thread: false }));
    const moved = await m.ok(await m.call("GET", `/messages/${id}`, org.member));
    expect(moved.message.subject).toBe("much later");
  });
});

describe("allow_edit_history", () => {
  it("off: fetched messages carry no edit_history and GET /messages/{id}/history is refused; on again, both are back", async () => {
    const id = await m.send(org.member, { type: "stream", to: "general", topic: "history", content: "first" });
    await m.ok(await m.call("PATCH", `/messages/${id}`, org.member, { content: "second" }));
    const fetchOne = async () => (await m.ok(await m.call("GET", `/messages/${id}`, org.member2))).message;
    expect((await fetchOne()).edit_history).toHaveLength(1);
    await patchRealm(org.admin, { allow_edit_history: false });
    expect(await fetchOne()).not.toHaveProperty("edit_history");
    const listed = await m.ok(await m.call("GET", "/messages", org.member2, { anchor: id, num_before: 0, num_after: 0 }));
    expect(listed.messages[0]).not.toHaveProperty("edit_history");
    expectError(await m.call("GET", `/messages/${id}/history`, org.member), 400, "BAD_REQUEST", "Message edit history is disabled in this organization");
    await patchRealm(org.admin, { allow_edit_history: true });
    expect((await fetchOne()).edit_history).toHaveLength(1);
    expect((await m.ok(await m.call("GET", `/messages/${id}/history`, org.member))).message_history).toHaveLength(2);
  });
});
