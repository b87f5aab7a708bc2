import { AmqpClient, createLogger, OutboxRelay, withTx } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doReplicateMutedUsers } from "../src/actions/muted-users";
import { consumeMutedUsers } from "../src/consumers/muted-users";
import { startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * Muted users' effect on messages, as Zulip's: accounts changes a mute list (its public API) and
 * publishes it through its outbox; messaging's consumer keeps the replica, marks the newly muted
 * user's messages read for the muting user, and the send path marks new messages from a muted
 * sender read for them. Real relay, broker and consumer.
 */
let m: Messaging;
let org: Org;
let amqp: AmqpClient;
let relay: OutboxRelay;
let accounts: ReturnType<typeof serviceClient>;
let lounge: number;

beforeAll(async () => {
  m = await startMessaging();
  const log = createLogger("muted-users-test", "silent");
  const c = m.deps.config;
  amqp = new AmqpClient(c.AMQP_URL, c.AMQP_EXCHANGE, c.AMQP_QUEUE_PREFIX, log, c.AMQP_QUEUE_EXPIRES_MS);
  await amqp.start();
  await consumeMutedUsers(amqp, m.deps);
  relay = new OutboxRelay({ pool: m.accountsPool, schema: "accounts", amqp, log, pollMs: 50 });
  relay.start();
  accounts = serviceClient(m.accountsApp, c.INTERNAL_TOKEN);
  org = await m.createOrg();
  // Read receipts are off by default (Zulip's default); the administrator turns them on.
  await m.ok(await accounts("PATCH", "/realm", { as: org.admin.as, params: { enable_read_receipts: true } }));
  lounge = await m.createStream(org.owner, "lounge", [org.owner, org.member, org.member2]);
}, 60_000);
afterAll(async () => {
  await relay?.stop();
  await amqp?.close();
  await m?.close();
});

/** Mutes or unmutes through accounts' public API, then waits until messaging's replica has it. */
async function setMuted(who: TestUser, target: TestUser, muted: boolean) {
  await m.ok(await accounts(muted ? "POST" : "DELETE", `/users/me/muted_users/${target.user_id}`, { as: who.as }));
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await m.deps.pool.query("SELECT muted_user_ids FROM muted_users WHERE user_id = $1", [who.user_id]);
    const has = (rows[0]?.muted_user_ids ?? []).map(Number).includes(target.user_id);
    if (has === muted) return;
    if (Date.now() > deadline) throw new Error("the mute list did not reach messaging");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The flags of a user's messages as GET /messages shows them, by message id. */
async function flagsOf(who: TestUser, ids: number[]): Promise<Map<number, string[]>> {
  const res = await m.ok(await m.call("GET", "/messages", who, { anchor: "oldest", num_before: 0, num_after: 1000 }));
  const byId = new Map<number, string[]>(res.messages.map((x: { id: number; flags: string[] }) => [x.id, x.flags]));
  return new Map(ids.map((id) => [id, byId.get(id)!]));
}

/** Register's unread_msgs for a user (messaging's slice). */
async function unread(who: TestUser) {
  const state = await m.ok(await m.call("POST", "/internal/register_state/messaging", who, { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) }));
  return state.unread_msgs;
}
const unreadIds = (u: any): number[] =>
  [...u.streams.flatMap((s: any) => s.unread_message_ids), ...u.pms.flatMap((p: any) => p.unread_message_ids), ...u.huddles.flatMap((h: any) => h.unread_message_ids)].sort(
    (a: number, b: number) => a - b,
  );

/** Each recipient's flags on the message event of the last send. */
async function flagsOfLastSend(): Promise<Map<number, string[]>> {
  const sent = (await m.clientEvents()).filter((e) => e.type === "messaging.message.sent").at(-1)!;
  return new Map(sent.users.map((u: { id: number; flags: string[] }) => [u.id, u.flags]));
}

/** Waits (briefly) for messaging's outbox to hold client events matching `pred`. */
async function eventsUntil(pred: (e: { type: string; event: any; users: any[] }) => boolean) {
  const seen: Array<{ type: string; event: any; users: any[] }> = [];
  const deadline = Date.now() + 10_000;
  while (!seen.some(pred) && Date.now() < deadline) {
    seen.push(...(await m.clientEvents()));
    if (!seen.some(pred)) await new Promise((r) => setTimeout(r, 50));
  }
  return seen;
}

describe("muting a user marks their messages read for the muting user", () => {
  let before: { stream: number; dm: number; group: number; byOwner: number };

  it("marks the muted user's unread messages read at once, with one update_message_flags event to the muting user", async () => {
    before = {
      stream: await m.send(org.member2, { type: "stream", to: lounge, topic: "chat", content: "hello all" }),
      dm: await m.send(org.member2, { type: "private", to: JSON.stringify([org.member.user_id]), content: "hi Mel" }),
      group: await m.send(org.member2, { type: "private", to: JSON.stringify([org.member.user_id, org.owner.user_id]), content: "hi both" }),
      byOwner: await m.send(org.owner, { type: "stream", to: lounge, topic: "chat", content: "from Olivia" }),
    };
    expect(unreadIds(await unread(org.member))).toEqual([before.stream, before.dm, before.group, before.byOwner]);
    await m.clientEvents();

    await setMuted(org.member, org.member2, true);
    const events = await eventsUntil((e) => e.type === "messaging.message_flags.updated");
    expect(events.map((e) => [e.type, e.event, e.users])).toEqual([
      [
        "messaging.message_flags.updated",
        { type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [before.stream, before.dm, before.group], all: false },
        [org.member.user_id],
      ],
    ]);

    const flags = await flagsOf(org.member, Object.values(before));
    for (const id of [before.stream, before.dm, before.group]) expect(flags.get(id)).toContain("read");
    expect(flags.get(before.byOwner)).not.toContain("read");
    const u = await unread(org.member);
    expect(unreadIds(u)).toEqual([before.byOwner]);
    expect(u.count).toBe(1);
    // Nobody else's copies change.
    expect(unreadIds(await unread(org.owner))).toContain(before.group);
  });

  it("starts new messages from the muted user read for the muting user only (channel, direct, group direct)", async () => {
    const stream = await m.send(org.member2, { type: "stream", to: lounge, topic: "chat", content: "still here" });
    let event = await flagsOfLastSend();
    expect(event.get(org.member.user_id)).toEqual(["read"]);
    expect(event.get(org.owner.user_id)).toEqual([]);

    const dm = await m.send(org.member2, { type: "private", to: JSON.stringify([org.member.user_id]), content: "you there?" });
    event = await flagsOfLastSend();
    expect(event.get(org.member.user_id)).toEqual(["read"]);
    // Recipients given by email take the other read path (no send context); same answer.
    const group = await m.send(org.member2, { type: "private", to: JSON.stringify([org.member.email, org.owner.email]), content: "@**Mel Member** look" });
    event = await flagsOfLastSend();
    // Other flags stay as they are.
    expect(event.get(org.member.user_id)).toEqual(["read", "mentioned"]);
    expect(event.get(org.owner.user_id)).toEqual([]);

    const mine = await flagsOf(org.member, [stream, dm, group]);
    for (const id of [stream, dm, group]) expect(mine.get(id)).toContain("read");
    expect((await flagsOf(org.owner, [stream, group])).get(stream)).not.toContain("read");
    expect(unreadIds(await unread(org.member))).toEqual([before.byOwner]);
    const owner = unreadIds(await unread(org.owner));
    expect(owner).toEqual(expect.arrayContaining([stream, group]));
    // Muting is one way: the muting user's messages reach the muted user unread.
    await m.send(org.member, { type: "private", to: JSON.stringify([org.member2.user_id]), content: "yes", read_by_sender: true });
    expect((await flagsOfLastSend()).get(org.member2.user_id)).toEqual([]);
  });

  it("unmuting leaves messages as they are; later messages arrive unread again", async () => {
    await setMuted(org.member, org.member2, false);
    await new Promise((r) => setTimeout(r, 200));
    expect((await m.clientEvents()).filter((e) => e.type === "messaging.message_flags.updated")).toEqual([]);
    expect(unreadIds(await unread(org.member))).toEqual([before.byOwner]);

    const id = await m.send(org.member2, { type: "stream", to: lounge, topic: "chat", content: "back" });
    expect((await flagsOfLastSend()).get(org.member.user_id)).toEqual([]);
    expect(unreadIds(await unread(org.member))).toEqual([before.byOwner, id]);
  });

  it("muting again marks only what is unread now, and sends no event when nothing is", async () => {
    const unreadBefore = unreadIds(await unread(org.member));
    await setMuted(org.member, org.member2, true);
    const events = await eventsUntil((e) => e.type === "messaging.message_flags.updated");
    expect(events.find((e) => e.type === "messaging.message_flags.updated")!.event.messages).toEqual([unreadBefore.at(-1)]);

    // Muting the owner too: the message of theirs still unread becomes read.
    await setMuted(org.member, org.owner, true);
    const more = await eventsUntil((e) => e.type === "messaging.message_flags.updated");
    expect(more.find((e) => e.type === "messaging.message_flags.updated")!.event.messages).toEqual([before.byOwner]);
    expect(unreadIds(await unread(org.member))).toEqual([]);

    // The moderator has nothing unread from the admin: the mute sends no flags event.
    await setMuted(org.moderator, org.admin, true);
    await new Promise((r) => setTimeout(r, 200));
    expect((await m.clientEvents()).filter((e) => e.type === "messaging.message_flags.updated")).toEqual([]);
  });

  it("hides read receipts between a user and those they muted or who muted them (Zulip's feature level 143)", async () => {
    const everyone = [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest];
    await m.createStream(org.owner, "receipts", everyone);
    const id = await m.send(org.admin, { type: "stream", to: "receipts", topic: "t", content: "who reads this?" });
    for (const u of everyone) await m.ok(await m.call("POST", "/messages/flags", u, { messages: JSON.stringify([id]), op: "add", flag: "read" }));
    const receipts = async (u: TestUser) => (await m.ok(await m.call("GET", `/messages/${id}/read_receipts`, u))).user_ids;
    const ids = (...users: TestUser[]) => users.map((u) => u.user_id).sort((a, b) => a - b);

    // The member muted the owner and member2; nobody else muted anyone they read with.
    expect(await receipts(org.member)).toEqual(ids(org.moderator, org.member, org.guest));
    // Member2 was muted by the member; the owner too.
    expect(await receipts(org.member2)).toEqual(ids(org.owner, org.moderator, org.member2, org.guest));
    expect(await receipts(org.owner)).toEqual(ids(org.owner, org.moderator, org.member2, org.guest));
    expect(await receipts(org.guest)).toEqual(ids(org.owner, org.moderator, org.member, org.member2, org.guest));
  });

  it("never goes back to an older list", async () => {
    await withTx(m.deps.pool, (tx) => doReplicateMutedUsers(tx, org.realmId, org.member.user_id, [], 1));
    const { rows } = await m.deps.pool.query("SELECT muted_user_ids FROM muted_users WHERE user_id = $1", [org.member.user_id]);
    expect(rows[0].muted_user_ids.map(Number).sort()).toEqual([org.member2.user_id, org.owner.user_id].sort());
  });
});
