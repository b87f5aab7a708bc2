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
