import { AmqpClient, createLogger, OutboxRelay } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeAccountsEvents } from "../src/consumers/accounts";
import { startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let amqp: AmqpClient;
let accountsRelay: OutboxRelay;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  const log = createLogger("test", "silent");
  const vars = m.env.vars;
  amqp = new AmqpClient(vars.AMQP_URL, vars.AMQP_EXCHANGE, vars.AMQP_QUEUE_PREFIX, log, 120000);
  await amqp.start();
  await consumeAccountsEvents(amqp, m.deps);
  accountsRelay = new OutboxRelay({ pool: m.accountsPool, schema: "accounts", amqp, log });
});
afterAll(async () => {
  await amqp?.close();
  await m?.close();
});

/** Calls accounts' API as the owner and lets messaging's consumer see accounts' events; returns messaging's client events. */
async function viaAccounts(method: "DELETE" | "POST", path: string, done: () => Promise<boolean>) {
  await m.outbox();
  const accounts = serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN);
  await m.ok(await accounts(method, path, { as: org.owner.as }));
  await accountsRelay.drain();
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && !(await done())) await new Promise((res) => setTimeout(res, 50));
  return m.clientEvents();
}

/** Changes a role through accounts' API and lets messaging's consumer see accounts' event; returns messaging's client events. */
async function changeRole(user: Org["member"], role: number) {
  await m.outbox();
  const accounts = serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN);
  await m.ok(await accounts("PATCH", `/users/${user.user_id}`, { as: org.owner.as, params: { role } }));
  await accountsRelay.drain();
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const { rows } = await m.deps.pool.query("SELECT role FROM users WHERE user_id = $1", [user.user_id]);
    if (rows[0]?.role === role) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  return m.clientEvents();
}

describe("a role change shows or hides channels (Zulip feature level 205)", () => {
  it("a member made administrator gets the private channels they are not in, with their subscribers; and loses them again", async () => {
    const secret = await m.createStream(org.owner, "secret", [org.owner], { invite_only: true });
    await m.createStream(org.owner, "open", [org.owner]);
    // The replica knows the member with their current role.
    await m.ok(await m.call("GET", "/users/me/subscriptions", org.member2));
    const promoted = await changeRole(org.member2, 200);
    expect(promoted.map((e) => [e.type, e.users])).toEqual([
      ["messaging.stream.access_gained", [org.member2.user_id]],
      ["messaging.subscription.peer_added", [org.member2.user_id]],
    ]);
    expect(promoted[0].event).toMatchObject({ type: "stream", op: "create", streams: [{ stream_id: secret, name: "secret", invite_only: true }] });
    expect(promoted[1].event).toEqual({ type: "subscription", op: "peer_add", stream_ids: [secret], user_ids: [org.owner.user_id] });

    const demoted = await changeRole(org.member2, 400);
    expect(demoted.map((e) => [e.type, e.users, e.event.op])).toEqual([["messaging.stream.access_lost", [org.member2.user_id], "delete"]]);
    expect(demoted[0].event.streams.map((s: { stream_id: number }) => s.stream_id)).toEqual([secret]);
  });

  it("a guest made member gets the public channels; a change that shows nothing new says nothing", async () => {
    await m.ok(await m.call("GET", "/users/me/subscriptions", org.guest));
    const events = await changeRole(org.guest, 400);
    expect(events[0].type).toBe("messaging.stream.access_gained");
    expect(events[0].event.streams.map((s: { name: string }) => s.name)).toEqual(["open"]);
    expect(await changeRole(org.guest, 300)).toEqual([]);
  });
});

describe("deactivation and reactivation change subscriber lists", () => {
  it("peer_remove when a subscriber is deactivated, peer_add when reactivated, to those who see the channel's subscribers", async () => {
    const room = await m.createStream(org.owner, "room", [org.owner, org.member]);
    const active = async (want: boolean) => (await m.deps.pool.query("SELECT is_active FROM users WHERE user_id = $1", [org.member.user_id])).rows[0]?.is_active === want;
    const gone = await viaAccounts("DELETE", `/users/${org.member.user_id}`, () => active(false));
    const removed = gone.filter((e) => e.type === "messaging.subscription.peer_removed");
    expect(removed.map((e) => e.event)).toEqual([{ type: "subscription", op: "peer_remove", stream_ids: [room], user_ids: [org.member.user_id] }]);
    expect(removed[0].users).toContain(org.owner.user_id);
    expect(removed[0].users).not.toContain(org.member.user_id);
    expect((await m.ok(await m.call("GET", `/streams/${room}/members`, org.owner))).subscribers).toEqual([org.owner.user_id]);

    const back = await viaAccounts("POST", `/users/${org.member.user_id}/reactivate`, () => active(true));
    expect(back.filter((e) => e.type === "messaging.subscription.peer_added").map((e) => e.event)).toEqual([
      { type: "subscription", op: "peer_add", stream_ids: [room], user_ids: [org.member.user_id] },
    ]);
    expect((await m.ok(await m.call("GET", `/streams/${room}/members`, org.owner))).subscribers).toEqual([org.owner.user_id, org.member.user_id].sort((a, b) => a - b));
  });
});
