import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, eventsEnv, notice, poll, queueFor, user, type EventsEnv, type Instance } from "./support";

/**
 * Deactivations through real RabbitMQ, the real consumer and Redis: accounts' domain events drop
 * the queues of the deactivated user (or organization), in order with the other client events.
 */

let ev: EventsEnv;
let inst: Instance;

beforeAll(async () => {
  ev = await eventsEnv();
  inst = await ev.start();
});
afterAll(async () => {
  await ev.teardown();
});

type Who = ReturnType<typeof user>;

const summary = (who: Who) => ({
  user_id: who.userId,
  realm_id: who.realmId,
  email: who.email,
  delivery_email: who.email,
  full_name: "Someone",
  role: who.role,
  is_active: false,
  is_bot: false,
  bot_type: null,
  bot_owner_id: null,
  date_joined: new Date().toISOString(),
  timezone: "",
});

/** The envelope accounts publishes: the summary, plus the realm_user notice for the others. */
const deactivateUser = (who: Who, audience: number[], id?: string) =>
  ev.publish(
    "accounts.user.deactivated",
    who.realmId,
    { user: summary(who), ...notice({ type: "realm_user", op: "update", person: { user_id: who.userId, is_active: false } }, audience) },
    id,
  );

const deactivateRealm = (realmId: number, id?: string) => ev.publish("accounts.realm.deactivated", realmId, { realm_id: realmId }, id);

const key = (suffix: string) => `${inst.config.REDIS_PREFIX}${suffix}`;

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts a blocking poll and resolves once it waits in Redis, with the poll's answer to come. */
async function heldPoll(who: Who, queueId: string) {
  const answer = poll(inst, who, queueId);
  await until(async () => (await ev.redis.hget(key(`q:${queueId}`), "waiting_until")) !== null, "the poll to wait");
  // Wrapped: an async function returning the promise itself would wait for the answer.
  return { answer };
}

const badQueue = (queueId: string) => ({ result: "error", code: "BAD_EVENT_QUEUE_ID", msg: `Bad event queue ID: ${queueId}`, queue_id: queueId });

describe("accounts.user.deactivated", () => {
  it("drops every queue of the user, ending a held poll with BAD_EVENT_QUEUE_ID, and only theirs", async () => {
    const gone = user();
    const peer = user();
    const sameIdElsewhere = user({ userId: gone.userId, realmId: 2 });
    const held = await queueFor(inst, gone);
    const idle = await queueFor(inst, gone, { all_public_streams: true });
    const peerQueue = await queueFor(inst, peer);
    const elsewhere = await queueFor(inst, sameIdElsewhere);
    const waiting = await heldPoll(gone, held);

    await deactivateUser(gone, [peer.userId]);

    const released = await waiting.answer;
    expect(released.status).toBe(400);
    expect(released.body).toEqual(badQueue(held));
    for (const q of [held, idle]) {
      const later = await poll(inst, gone, q, undefined, { dont_block: true });
      expect(later.status).toBe(400);
      expect(later.body).toEqual(badQueue(q));
      expect(await ev.redis.exists(key(`q:${q}`), key(`qe:${q}`))).toBe(0);
      expect(await ev.redis.zscore(key("expiry"), q)).toBeNull();
    }
    expect(await ev.redis.exists(key(`u:1:${gone.userId}`))).toBe(0);
    expect(await ev.redis.sismember(key("r:1"), idle)).toBe(0);
    // The envelope's own notice still reached the others.
    expect((await collect(inst, peer, peerQueue, 1)).events).toEqual([
      { id: 0, type: "realm_user", op: "update", person: { user_id: gone.userId, is_active: false } },
    ]);
    // The same user id in another organization is someone else.
    const other = await poll(inst, sameIdElsewhere, elsewhere, undefined, { dont_block: true });
    expect(other.status).toBe(200);
  });

  it("is ordered with client events and handled once: a redelivery spares a queue registered since", async () => {
    const who = user();
    const first = await queueFor(inst, who);
    const waiting = await heldPoll(who, first);
    const envelope = await deactivateUser(who, []);
    expect((await waiting.answer).body).toEqual(badQueue(first));

    // Reactivated and registered again; then the broker redelivers the old envelope.
    const second = await queueFor(inst, who);
    await deactivateUser(who, [], envelope.id);
    await ev.publish("test.marker.sent", 1, notice({ type: "marker" }, [who.userId]));
    // The marker is consumed after the redelivery, so the queue surviving it shows it was skipped.
    expect((await collect(inst, who, second, 1)).events).toEqual([{ id: 0, type: "marker" }]);
  });

  it("an event for the user right after the deactivation finds no queue", async () => {
    const who = user();
    const peer = user();
    const q = await queueFor(inst, who);
    const pq = await queueFor(inst, peer);
    await ev.publish("test.before.sent", 1, notice({ type: "before" }, [who.userId]));
    await deactivateUser(who, []);
    await ev.publish("test.after.sent", 1, notice({ type: "after" }, [who.userId, peer.userId]));
    expect((await collect(inst, peer, pq, 1)).events.map((e) => e.type)).toEqual(["after"]);
    const res = await poll(inst, who, q, undefined, { dont_block: true });
    expect(res.body).toEqual(badQueue(q));
  });

  it("a malformed deactivation is set aside without stopping the stream", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    await ev.publish("accounts.user.deactivated", 1, { user: { user_id: "nobody" } });
    await ev.publish("test.marker.sent", 1, notice({ type: "marker" }, [who.userId]));
    expect((await collect(inst, who, q, 1)).events).toEqual([{ id: 0, type: "marker" }]);
  });
});

describe("accounts.realm.deactivated", () => {
  it("drops every queue of the organization, held polls included, and none of another's", async () => {
    const realmId = 30;
    const people = [user({ realmId }), user({ realmId }), user({ realmId, role: 600 })];
    const queues = await Promise.all(people.map((p, i) => queueFor(inst, p, i === 0 ? { all_public_streams: true } : {})));
    const extra = await queueFor(inst, people[1], { narrow: [["channel", "Denmark"]] });
    const outsider = user({ realmId: 31 });
    const kept = await queueFor(inst, outsider);
    const waiting = await heldPoll(people[1], queues[1]);

    const envelope = await deactivateRealm(realmId);

    expect((await waiting.answer).body).toEqual(badQueue(queues[1]));
    const all = [...queues.map((q, i) => [people[i], q] as const), [people[1], extra] as const];
    for (const [who, q] of all) {
      const res = await poll(inst, who, q, undefined, { dont_block: true });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(badQueue(q));
    }
    expect(await ev.redis.exists(key(`r:${realmId}`), ...people.map((p) => key(`u:${realmId}:${p.userId}`)))).toBe(0);

    // Handled once: a queue registered after it survives the redelivery.
    const again = await queueFor(inst, people[0]);
    await deactivateRealm(realmId, envelope.id);
    await ev.publish("test.marker.sent", realmId, notice({ type: "marker" }, [people[0].userId]));
    expect((await collect(inst, people[0], again, 1)).events).toEqual([{ id: 0, type: "marker" }]);
    expect((await poll(inst, outsider, kept, undefined, { dont_block: true })).status).toBe(200);
  });

  it("finds the organization's queues among many others (the scan pages through all)", async () => {
    const realmId = 40;
    const mine = await Promise.all(Array.from({ length: 30 }, () => queueFor(inst, user({ realmId }))));
    const others = await Promise.all(Array.from({ length: 1200 }, (_, i) => inst.app.events.store.create(
      {
        id: `other-${i}`, userId: 5000 + i, realmId: 41, eventTypes: null, narrow: [], allPublicStreams: false,
        capabilities: {}, applyMarkdown: true, clientGravatar: true, includeSubscribers: false, slimPresence: false, lifespanSecs: 600,
      },
      false,
      Date.now(),
    )));
    expect(others).toHaveLength(1200);
    const envelope = await deactivateRealm(realmId);
    await until(async () => (await ev.redis.exists(key(`seen:${envelope.id}:drop`))) === 1, "the deactivation to be handled");
    for (const q of mine) expect(await ev.redis.exists(key(`q:${q}`))).toBe(0);
    expect(await ev.redis.exists(...Array.from({ length: 1200 }, (_, i) => key(`q:other-${i}`)))).toBe(1200);
  });
});
