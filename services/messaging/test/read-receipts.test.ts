import { AmqpClient, createLogger, OutboxRelay } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeAccountsEvents } from "../src/consumers/accounts";
import { consumeUserSettings } from "../src/consumers/user-settings";
import { selectUsersByIds } from "../src/store/users";
import { selectUserSettings } from "../src/store/user-settings";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * GET /messages/{message_id}/read_receipts, by Zulip's read_receipts view. Users and their
 * send_read_receipts setting reach messaging as in production: accounts' events through the real
 * relay, broker and consumers.
 */
let m: Messaging;
let org: Org;
let other: Org;
let amqp: AmqpClient;
let relay: OutboxRelay;

beforeAll(async () => {
  m = await startMessaging();
  const log = createLogger("read-receipts-test", "silent");
  const c = m.deps.config;
  amqp = new AmqpClient(c.AMQP_URL, c.AMQP_EXCHANGE, c.AMQP_QUEUE_PREFIX, log, c.AMQP_QUEUE_EXPIRES_MS);
  await amqp.start();
  await consumeUserSettings(amqp, m.deps);
  await consumeAccountsEvents(amqp, m.deps);
  relay = new OutboxRelay({ pool: m.accountsPool, schema: "accounts", amqp, log, pollMs: 50 });
  relay.start();
  org = await m.createOrg();
  other = await m.createOrg();
  // Read receipts are off by default (Zulip's default); this organization's administrator turns them on.
  await m.ok(await serviceClient(m.accountsApp, c.INTERNAL_TOKEN)("PATCH", "/realm", { as: org.admin.as, params: { enable_read_receipts: true } }));
  await m.createStream(org.owner, "general", [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest, org.bot]);
  await m.createStream(org.owner, "secret", [org.owner], { invite_only: true });
  await m.createStream(org.owner, "lounge", [org.owner, org.member2]);
  await m.createStream(other.owner, "theirs", [other.owner, other.member]);
});
afterAll(async () => {
  await relay?.stop();
  await amqp?.close();
  await m?.close();
});

const receipts = (who: TestUser, messageId: number) => m.call("GET", `/messages/${messageId}/read_receipts`, who);
const markRead = async (messageId: number, ...users: TestUser[]) => {
  for (const u of users) await m.ok(await m.call("POST", "/messages/flags", u, { messages: JSON.stringify([messageId]), op: "add", flag: "read" }));
};
const ids = (...users: TestUser[]) => users.map((u) => u.user_id).sort((a, b) => a - b);

/** Waits until messaging's replica holds what `check` wants (the consumers run asynchronously). */
async function eventually(check: () => Promise<boolean>) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("replica not updated in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("GET /messages/{message_id}/read_receipts", () => {
  it("lists who read the message: the viewer and bots included, the sender never", async () => {
    const id = await m.send(org.owner, { type: "stream", to: "general", topic: "t", content: "news", read_by_sender: "true" });
    expect(await m.ok(await receipts(org.member, id))).toEqual({ result: "success", msg: "", user_ids: [] });
    await markRead(id, org.member, org.member2, org.bot);
    const res = await receipts(org.member, id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "", user_ids: ids(org.member, org.member2, org.bot) });
    // Anyone who may read the message may ask, the sender too; a guest subscribed to the channel as well.
    expect((await m.ok(await receipts(org.owner, id))).user_ids).toEqual(ids(org.member, org.member2, org.bot));
    expect((await m.ok(await receipts(org.guest, id))).user_ids).toEqual(ids(org.member, org.member2, org.bot));
  });

  it("a direct message and a message read only through channel history are answered too", async () => {
    const dm = await m.send(org.member, { type: "direct", to: JSON.stringify([org.member2.user_id, org.admin.user_id]), content: "hi" });
    await markRead(dm, org.member, org.admin);
    expect((await m.ok(await receipts(org.member2, dm))).user_ids).toEqual(ids(org.admin));
    // member is not subscribed to lounge, but a public channel's history is readable.
    const lounge = await m.send(org.owner, { type: "stream", to: "lounge", topic: "t", content: "quiet" });
    await markRead(lounge, org.member2);
    expect((await m.ok(await receipts(org.member, lounge))).user_ids).toEqual(ids(org.member2));
  });

  it("leaves out users who turned send_read_receipts off, and deactivated users", async () => {
    const id = await m.send(org.owner, { type: "stream", to: "general", topic: "privacy", content: "who saw this?" });
    await markRead(id, org.member, org.member2, org.moderator);
    expect((await m.ok(await receipts(org.member, id))).user_ids).toEqual(ids(org.member, org.member2, org.moderator));

    const accounts = serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN);
    await m.ok(await accounts("PATCH", "/settings", { as: org.member2.as, params: { send_read_receipts: false } }));
    await eventually(async () => (await selectUserSettings(m.deps.pool, org.realmId, [org.member2.user_id])).get(org.member2.user_id)?.send_read_receipts === false);
    expect((await m.ok(await receipts(org.member, id))).user_ids).toEqual(ids(org.member, org.moderator));
    // Their own read state is hidden from themselves too, as in Zulip.
    expect((await m.ok(await receipts(org.member2, id))).user_ids).toEqual(ids(org.member, org.moderator));

    await m.deactivate(org.moderator);
    await eventually(async () => (await selectUsersByIds(m.deps.pool, org.realmId, [org.moderator.user_id]))[0]?.isActive === false);
    expect((await m.ok(await receipts(org.member, id))).user_ids).toEqual(ids(org.member));

    await m.ok(await accounts("PATCH", "/settings", { as: org.member2.as, params: { send_read_receipts: true } }));
    await eventually(async () => (await selectUserSettings(m.deps.pool, org.realmId, [org.member2.user_id])).get(org.member2.user_id)?.send_read_receipts === true);
    expect((await m.ok(await receipts(org.member, id))).user_ids).toEqual(ids(org.member, org.member2));
  });

  it("a message the user may not read is Invalid message(s): another organization's, a private channel's, a missing one", async () => {
    const secret = await m.send(org.owner, { type: "stream", to: "secret", topic: "t", content: "hidden" });
    await markRead(secret, org.owner);
    const foreign = await m.send(other.owner, { type: "stream", to: "theirs", topic: "t", content: "elsewhere" });
    for (const [who, id] of [
      [org.member, secret],
      [org.admin, secret],
      [org.member, foreign],
      [org.member, 999_999_999],
      // In an organization without read receipts too: the message is looked at first.
      [other.member, secret],
    ] as Array<[TestUser, number]>) {
      expectError(await receipts(who, id), 400, "BAD_REQUEST", "Invalid message(s)");
    }
    expect((await m.ok(await receipts(org.owner, secret))).user_ids).toEqual([]);
  });

  it("an organization without read receipts refuses: Read receipts are disabled in this organization.", async () => {
    const id = await m.send(other.owner, { type: "stream", to: "theirs", topic: "t", content: "hello" });
    await markRead(id, other.member);
    expectError(await receipts(other.member, id), 400, "BAD_REQUEST", "Read receipts are disabled in this organization.");
    expectError(await receipts(other.owner, id), 400, "BAD_REQUEST", "Read receipts are disabled in this organization.");
  });
});
