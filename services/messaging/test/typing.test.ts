import { AmqpClient, createLogger, OutboxRelay } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectZulipEvent } from "@chat/testkit/openapi";
import { MAX_CHANNEL_SIZE_FOR_TYPING_NOTIFICATIONS } from "../src/actions/typing";
import { consumeAccountsEvents } from "../src/consumers/accounts";
import { consumeUserSettings } from "../src/consumers/user-settings";
import { selectUserSettings } from "../src/store/user-settings";
import { selectUsersByIds } from "../src/store/users";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * POST /typing as Zulip's send_notification_backend answers it: the responses (status, code,
 * msg), and the typing notices messaging publishes: the event exactly as clients get it and who
 * gets it. The settings it honours come from accounts through the real relay, broker and
 * consumers. (Delivery into queues through the whole stack: typing-e2e.test.ts.)
 */
let m: Messaging;
let org: Org;
let amqp: AmqpClient;
let relay: OutboxRelay;

beforeAll(async () => {
  m = await startMessaging();
  const log = createLogger("typing-test", "silent");
  const c = m.deps.config;
  amqp = new AmqpClient(c.AMQP_URL, c.AMQP_EXCHANGE, c.AMQP_QUEUE_PREFIX, log, c.AMQP_QUEUE_EXPIRES_MS);
  await amqp.start();
  await consumeUserSettings(amqp, m.deps);
  await consumeAccountsEvents(amqp, m.deps);
  relay = new OutboxRelay({ pool: m.accountsPool, schema: "accounts", amqp, log, pollMs: 50 });
  relay.start();
  org = await m.createOrg();
}, 60_000);
afterAll(async () => {
  await relay?.stop();
  await amqp?.close();
  await m?.close();
});

const typing = (as: TestUser, params: Record<string, unknown>) => m.call("POST", "/typing", as, params);

/** Waits until `check` holds for messaging's replica (the consumers apply accounts' events). */
async function eventually(check: () => Promise<boolean>) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("messaging's replica did not catch up");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Changes the user's settings through accounts' public route and waits for messaging's replica. */
async function setSettings(user: TestUser, settings: Record<string, unknown>) {
  await m.ok(await serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN)("PATCH", "/settings", { as: user.as, params: settings }));
  await eventually(async () => {
    const got = (await selectUserSettings(m.deps.pool, user.realm_id, [user.user_id])).get(user.user_id) ?? {};
    return Object.entries(settings).every(([k, v]) => got[k] === v);
  });
}

/** The typing notices written since the last read: event (checked against Zulip's schema) and audience. */
async function typingNotices() {
  const notices = (await m.clientEvents()).filter((e) => e.type.startsWith("messaging.typing."));
  for (const n of notices) {
    expect(n.type).toBe(`messaging.typing.${n.event.op === "start" ? "started" : "stopped"}`);
    expectZulipEvent({ ...n.event, id: 0 }, JSON.stringify(n.event));
  }
  return notices.map((n) => ({ event: n.event, users: [...n.users].sort((a: number, b: number) => a - b) }));
}

const who = (u: TestUser) => ({ user_id: u.user_id, email: u.email });
const ids = (...us: TestUser[]) => us.map((u) => u.user_id).sort((a, b) => a - b);

describe("direct message typing", () => {
  it("start and stop reach the recipients and the sender; recipients list the sender too", async () => {
    await m.outbox();
    const { member, member2, admin } = org;
    expect(await m.ok(await typing(member, { type: "direct", op: "start", to: JSON.stringify([member2.user_id]) }))).toEqual({ result: "success", msg: "" });
    await m.ok(await typing(member, { op: "stop", to: JSON.stringify([member2.user_id, admin.user_id]) }));
    expect(await typingNotices()).toEqual([
      {
        event: { type: "typing", op: "start", message_type: "direct", sender: who(member), recipients: [who(member2), who(member)] },
        users: ids(member, member2),
      },
      {
        event: { type: "typing", op: "stop", message_type: "direct", sender: who(member), recipients: [who(member2), who(admin), who(member)] },
        users: ids(member, member2, admin),
      },
    ]);
  });

  it("the legacy type 'private' is a direct message; to oneself only the sender; repeated ids count once", async () => {
    await m.outbox();
    await m.ok(await typing(org.member, { type: "private", op: "start", to: JSON.stringify([org.member2.user_id, org.member2.user_id]) }));
    await m.ok(await typing(org.member, { op: "start", to: JSON.stringify([org.member.user_id]) }));
    const [legacy, self] = await typingNotices();
    expect(legacy.event).toMatchObject({ message_type: "direct", recipients: [who(org.member2), who(org.member)] });
    expect(self).toEqual({ event: expect.objectContaining({ recipients: [who(org.member)] }), users: [org.member.user_id] });
  });

  it("a deactivated recipient stays in the recipients but is not told", async () => {
    const gone = await org.extra(1);
    await m.deactivate(gone);
    await eventually(async () => (await selectUsersByIds(m.deps.pool, org.realmId, [gone.user_id]))[0]?.isActive === false);
    await m.outbox();
    await m.ok(await typing(org.member, { op: "start", to: JSON.stringify([gone.user_id, org.member2.user_id]) }));
    const [notice] = await typingNotices();
    expect(notice.event.recipients).toEqual([who(gone), who(org.member2), who(org.member)]);
    expect(notice.users).toEqual(ids(org.member, org.member2));
  });

  it("bad input answers Zulip's errors and tells nobody", async () => {
    await m.outbox();
    const { member, member2 } = org;
    const to = JSON.stringify([member2.user_id]);
    const missingOp = await typing(member, { to });
    expectError(missingOp, 400, "REQUEST_VARIABLE_MISSING", "Missing 'op' argument");
    expect(missingOp.body.var_name).toBe("op");
    expectError(await typing(member, { op: "typing", to }), 400, "BAD_REQUEST", "Invalid op");
    expectError(await typing(member, { type: "huddle", op: "start", to }), 400, "BAD_REQUEST", "Invalid type");
    expectError(await typing(member, { op: "start" }), 400, "BAD_REQUEST", "Missing 'to' argument");
    expectError(await typing(member, { op: "start", to: "[]" }), 400, "BAD_REQUEST", "Empty 'to' list");
    expectError(await typing(member, { op: "start", to: "[1," }), 400, "BAD_REQUEST", "to is not valid JSON");
    // Email addresses were accepted before Zulip 3.0 (feature level 11), no longer.
    expectError(await typing(member, { op: "start", to: JSON.stringify([member2.email]) }), 400, "BAD_REQUEST", "to[0] is not an integer");
    expectError(await typing(member, { op: "start", to: JSON.stringify([member2.user_id, 999_999_999]) }), 400, "BAD_REQUEST", "Invalid user ID 999999999");
    expect(await typingNotices()).toEqual([]);
  });

  it("a user of another organization is an invalid user id, and the other organization hears nothing", async () => {
    const other = await m.createOrg();
    await m.outbox();
    expectError(await typing(org.member, { op: "start", to: JSON.stringify([other.member.user_id]) }), 400, "BAD_REQUEST", `Invalid user ID ${other.member.user_id}`);
    await m.ok(await typing(other.member, { op: "start", to: JSON.stringify([other.member2.user_id]) }));
    const notices = await typingNotices();
    expect(notices.map((n) => n.users)).toEqual([ids(other.member, other.member2)]);
    const { rows } = await m.deps.pool.query("SELECT DISTINCT realm_id FROM outbox WHERE type LIKE 'messaging.typing.%' AND payload->>'sender_id' = $1", [String(other.member.user_id)]);
    expect(rows.map((r) => Number(r.realm_id))).toEqual([other.realmId]);
  });
});

describe("channel typing", () => {
  let channel: number;
  beforeAll(async () => {
    channel = await m.createStream(org.owner, "typing-general", [org.owner, org.member, org.member2, org.guest]);
  });

  it("goes to the channel's subscribers, the sender among them, with the channel and topic", async () => {
    await m.outbox();
    await m.ok(await typing(org.member, { type: "stream", op: "start", stream_id: channel, topic: "  lunch  " }));
    // `channel` is the newer name (feature level 248); `subject` the old name of `topic`.
    await m.ok(await typing(org.member, { type: "channel", op: "stop", stream_id: channel, subject: "lunch" }));
    const subscribers = ids(org.owner, org.member, org.member2, org.guest);
    expect(await typingNotices()).toEqual([
      { event: { type: "typing", op: "start", message_type: "stream", sender: who(org.member), stream_id: channel, topic: "lunch" }, users: subscribers },
      { event: { type: "typing", op: "stop", message_type: "stream", sender: who(org.member), stream_id: channel, topic: "lunch" }, users: subscribers },
    ]);
  });

  it("a sender who may see a public channel without being subscribed may type there; only subscribers hear it", async () => {
    await m.outbox();
    await m.ok(await typing(org.moderator, { type: "stream", op: "start", stream_id: channel, topic: "t" }));
    const [notice] = await typingNotices();
    expect(notice.users).toEqual(ids(org.owner, org.member, org.member2, org.guest));
  });

  it("missing parameters, hidden or foreign channels and the channel's posting policy answer Zulip's errors", async () => {
    const secret = await m.createStream(org.owner, "typing-secret", [org.owner, org.member], { invite_only: true });
    const adminsOnly = await m.createStream(org.owner, "typing-announce", [org.owner, org.member], { stream_post_policy: 2 });
    const other = await m.createOrg();
    const theirs = await m.createStream(other.owner, "theirs", [other.owner]);
    await m.outbox();
    expectError(await typing(org.member, { type: "stream", op: "start", topic: "t" }), 400, "BAD_REQUEST", "Missing channel ID");
    expectError(await typing(org.member, { type: "stream", op: "start", stream_id: channel }), 400, "BAD_REQUEST", "Missing topic");
    expectError(await typing(org.member, { type: "stream", op: "start", stream_id: "x", topic: "t" }), 400, "BAD_REQUEST", "stream_id is not valid JSON");
    expectError(await typing(org.member2, { type: "stream", op: "start", stream_id: secret, topic: "t" }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await typing(org.member, { type: "stream", op: "start", stream_id: theirs, topic: "t" }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await typing(org.member, { type: "stream", op: "start", stream_id: 999_999_999, topic: "t" }), 400, "BAD_REQUEST", "Invalid channel ID");
    // A guest sees only channels they are subscribed to.
    expectError(await typing(org.guest, { type: "stream", op: "start", stream_id: adminsOnly, topic: "t" }), 400, "BAD_REQUEST", "Invalid channel ID");
    // An administrator sees a private channel but may not post there unsubscribed.
    expectError(await typing(org.admin, { type: "stream", op: "start", stream_id: secret, topic: "t" }), 400, "BAD_REQUEST", "Not authorized to send to channel 'typing-secret'");
    expectError(await typing(org.member, { type: "stream", op: "start", stream_id: adminsOnly, topic: "t" }), 400, "BAD_REQUEST", "Only organization administrators can send to this channel.");
    expect(await typingNotices()).toEqual([]);
    await m.ok(await typing(org.owner, { type: "stream", op: "start", stream_id: adminsOnly, topic: "t" }));
    await m.ok(await typing(org.member, { type: "stream", op: "start", stream_id: secret, topic: "t" }));
    expect((await typingNotices()).map((n) => n.users)).toEqual([ids(org.owner, org.member), ids(org.owner, org.member)]);
  });

  it(`a channel of more than ${MAX_CHANNEL_SIZE_FOR_TYPING_NOTIFICATIONS} subscribers tells nobody, and still answers success`, async () => {
    const crowd: TestUser[] = [];
    for (let i = 0; i < MAX_CHANNEL_SIZE_FOR_TYPING_NOTIFICATIONS - 1; i++) crowd.push(await org.extra(100 + i));
    const big = await m.createStream(org.owner, "typing-crowd", [org.owner, ...crowd]);
    await m.outbox();
    await m.ok(await typing(org.owner, { type: "stream", op: "start", stream_id: big, topic: "t" }));
    expect((await typingNotices()).map((n) => n.users.length)).toEqual([MAX_CHANNEL_SIZE_FOR_TYPING_NOTIFICATIONS]);
    await m.ok(await m.call("POST", "/users/me/subscriptions", org.owner, { subscriptions: JSON.stringify([{ name: "typing-crowd" }]), principals: JSON.stringify([org.member.user_id]) }));
    await m.outbox();
    await m.ok(await typing(org.owner, { type: "stream", op: "start", stream_id: big, topic: "t" }));
    expect(await typingNotices()).toEqual([]);
  }, 60_000);
});

describe("the users' typing settings (replicated from accounts)", () => {
  it("a sender who turned sending off is refused, per kind of conversation", async () => {
    const fresh = await m.createOrg();
    const channel = await m.createStream(fresh.owner, "general", [fresh.owner, fresh.member]);
    await setSettings(fresh.member, { send_private_typing_notifications: false });
    await m.outbox();
    const direct = { op: "start", to: JSON.stringify([fresh.owner.user_id]) };
    const inChannel = { type: "stream", op: "start", stream_id: channel, topic: "t" };
    expectError(await typing(fresh.member, direct), 400, "BAD_REQUEST", "User has disabled typing notifications for direct messages");
    await m.ok(await typing(fresh.member, inChannel));
    await setSettings(fresh.member, { send_private_typing_notifications: true, send_stream_typing_notifications: false });
    expectError(await typing(fresh.member, inChannel), 400, "BAD_REQUEST", "User has disabled typing notifications for channel messages");
    await m.ok(await typing(fresh.member, direct));
    expect((await typingNotices()).map((n) => n.event.message_type)).toEqual(["stream", "direct"]);
  });

  it("users who turned receiving off are not told, the sender included", async () => {
    const fresh = await m.createOrg();
    const channel = await m.createStream(fresh.owner, "general", [fresh.owner, fresh.member, fresh.member2]);
    await setSettings(fresh.member2, { receives_typing_notifications: false });
    await m.outbox();
    await m.ok(await typing(fresh.member, { op: "start", to: JSON.stringify([fresh.member2.user_id, fresh.owner.user_id]) }));
    await m.ok(await typing(fresh.member, { type: "stream", op: "start", stream_id: channel, topic: "t" }));
    const [direct, inChannel] = await typingNotices();
    expect(direct.event.recipients).toEqual([who(fresh.member2), who(fresh.owner), who(fresh.member)]);
    expect(direct.users).toEqual(ids(fresh.owner, fresh.member));
    expect(inChannel.users).toEqual(ids(fresh.owner, fresh.member));
    // Nobody left to tell: nothing is published.
    await setSettings(fresh.member, { receives_typing_notifications: false });
    await m.ok(await typing(fresh.member, { op: "start", to: JSON.stringify([fresh.member2.user_id]) }));
    expect(await typingNotices()).toEqual([]);
  });

  it("users appear with the email everyone may see, not a hidden delivery email", async () => {
    const fresh = await m.createOrg();
    // 4: nobody may see it; the API email becomes a made-up address.
    await m.ok(await serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN)("PATCH", "/settings", { as: fresh.member.as, params: { email_address_visibility: 4 } }));
    await eventually(async () => (await selectUsersByIds(m.deps.pool, fresh.realmId, [fresh.member.user_id]))[0]?.email !== fresh.member.email);
    const seen = await m.ok(await serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN)("GET", `/users/${fresh.member.user_id}`, { as: fresh.member2.as }));
    expect(seen.user.email).not.toBe(fresh.member.email);
    await m.outbox();
    await m.ok(await typing(fresh.member, { op: "start", to: JSON.stringify([fresh.member2.user_id]) }));
    const [notice] = await typingNotices();
    expect(notice.event.sender).toEqual({ user_id: fresh.member.user_id, email: seen.user.email });
    expect(notice.event.recipients).toContainEqual({ user_id: fresh.member.user_id, email: seen.user.email });
  });
});
