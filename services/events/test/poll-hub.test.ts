import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, createRedis, type Redis } from "@chat/platform";
import { PollHub, type WakeReason, type Waiter } from "../src/lib/poll-hub";

/** The waiter's next reason (or the heartbeat after `ms`). */
const next = (waiter: Waiter, ms: number) => new Promise<WakeReason>((onWake) => waiter.listen(ms, { onWake }));

/**
 * The poll hub against real Redis: a queue's wake channel stays subscribed for a while after its
 * poll ends, so the client's next poll needs no SUBSCRIBE, and wake-ups still reach it.
 */

const log = createLogger("poll-hub-test", process.env.TEST_LOG_LEVEL ?? "silent");
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const LINGER_MS = 300;

let sub: Redis;
let redis: Redis;
let hub: PollHub;

beforeAll(async () => {
  sub = createRedis(url, "");
  redis = createRedis(url, "");
  hub = new PollHub(sub, log, LINGER_MS);
});

afterAll(async () => {
  await hub.close();
  redis.disconnect();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const subscribers = async (channel: string) => ((await redis.pubsub("NUMSUB", channel)) as [string, number])[1];

/** Counts SUBSCRIBE commands the hub sends from now on. */
function countSubscribes(): { readonly n: number; stop(): void } {
  const original = sub.subscribe.bind(sub);
  const counter = { n: 0, stop: () => void (sub.subscribe = original) };
  sub.subscribe = ((...args: Parameters<Redis["subscribe"]>) => {
    counter.n++;
    return original(...args);
  }) as Redis["subscribe"];
  return counter;
}

describe("PollHub", () => {
  it("keeps a channel subscribed between polls, and unsubscribes it once nobody polls", async () => {
    const channel = `hubtest:wake:${randomUUID()}`;
    const counter = countSubscribes();
    try {
      const first = await hub.watch(channel, "t1");
      expect(await subscribers(channel)).toBe(1);
      first.close();
      // The next poll comes within the linger time: no new SUBSCRIBE, the channel stays.
      await sleep(LINGER_MS / 3);
      expect(await subscribers(channel)).toBe(1);
      const second = await hub.watch(channel, "t2");
      expect(counter.n).toBe(1);
      second.close();
      await sleep(LINGER_MS * 2);
      expect(await subscribers(channel)).toBe(0);
      // A later poll subscribes again.
      const third = await hub.watch(channel, "t3");
      expect(counter.n).toBe(2);
      expect(await subscribers(channel)).toBe(1);
      third.close();
    } finally {
      counter.stop();
    }
  });

  it("wakes a poll that reuses a lingering subscription", async () => {
    const channel = `hubtest:wake:${randomUUID()}`;
    (await hub.watch(channel, "a")).close();
    const waiter = await hub.watch(channel, "b");
    // The poll's own fetch echo arms it; then an event wakes it.
    await redis.publish(channel, "r:b");
    await redis.publish(channel, "e");
    expect(await next(waiter, 5000)).toBe("events");
    waiter.close();
  });

  it("ignores messages for a lingering channel and does not hand them to the next poll", async () => {
    const channel = `hubtest:wake:${randomUUID()}`;
    (await hub.watch(channel, "a")).close();
    await redis.publish(channel, "e"); // nobody waits: dropped
    await sleep(50);
    const waiter = await hub.watch(channel, "b");
    await redis.publish(channel, "r:b");
    // Nothing new after the echo: the poll waits for its heartbeat.
    expect(await next(waiter, 200)).toBe("heartbeat");
    waiter.close();
  });

  it("fires each heartbeat once, no sooner than asked and at most a step late; woken or closed waiters get none", async () => {
    const watchArmed = async (token: string) => {
      const channel = `hubtest:wake:${randomUUID()}`;
      const w = await hub.watch(channel, token);
      await redis.publish(channel, `r:${token}`);
      return { w, channel };
    };
    const [a, b, c, d] = await Promise.all(["a", "b", "c", "d"].map(watchArmed));
    await sleep(50); // the echoes are in
    const fired: Array<{ who: string; reason: WakeReason; at: number }> = [];
    const started = Date.now();
    const listen = (who: string, w: Waiter, ms: number) => w.listen(ms, { onWake: (reason) => fired.push({ who, reason, at: Date.now() - started }) });
    listen("a", a.w, 150);
    listen("b", b.w, 400);
    listen("c", c.w, 400);
    listen("d", d.w, 400);
    await redis.publish(b.channel, "e"); // b is woken by an event before its deadline
    c.w.close(); // c's poll went away
    await sleep(700);
    expect(fired.map((f) => `${f.who}:${f.reason}`).sort()).toEqual(["a:heartbeat", "b:events", "d:heartbeat"]);
    const at = (who: string) => fired.find((f) => f.who === who)!.at;
    expect(at("a")).toBeGreaterThanOrEqual(145);
    expect(at("a")).toBeLessThan(400);
    expect(at("d")).toBeGreaterThanOrEqual(395);
    for (const x of [a, b, d]) x.w.close();
  });

  it("subscribes again when the last poll's channel was dropped while a new poll raced it", async () => {
    const channel = `hubtest:wake:${randomUUID()}`;
    (await hub.watch(channel, "a")).close();
    // Poll exactly when the linger ends: either the subscription is kept or made again.
    await sleep(LINGER_MS);
    const waiter = await hub.watch(channel, "b");
    expect(await subscribers(channel)).toBe(1);
    await redis.publish(channel, "r:b");
    await redis.publish(channel, "e");
    expect(await next(waiter, 5000)).toBe("events");
    waiter.close();
  });
});
