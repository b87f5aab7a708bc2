import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMessaging, type Messaging, type Org } from "./helpers";

/**
 * `stream_weekly_traffic`: Zulip's average of the last four weeks, null for a channel under a
 * week old; a channel's count is reused for ten minutes.
 */
let m: Messaging;
let org: Org;
const DAY = 86_400_000;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
});
afterAll(() => m?.close());

const trafficOf = async (name: string) => {
  const res = await m.ok(await m.call("GET", "/users/me/subscriptions", org.owner));
  return (res.subscriptions as Array<{ name: string; stream_weekly_traffic: number | null }>).find((s) => s.name === name)?.stream_weekly_traffic;
};
const sendN = async (stream: number, n: number) => {
  for (let i = 0; i < n; i++) await m.send(org.member, { type: "stream", to: stream, topic: "t", content: `message ${i}` });
};

describe("stream_weekly_traffic", () => {
  it("averages the messages of the last four weeks, and is null while a channel is under a week old", async () => {
    const start = m.clock.now();
    m.clock.set(new Date(start.getTime() - 60 * DAY));
    const old = await m.createStream(org.owner, "old channel", [org.owner, org.member]);
    await sendN(old, 5); // 60 days ago: outside the window
    m.clock.set(new Date(start.getTime() - 20 * DAY));
    await sendN(old, 9); // 20 days ago
    m.clock.set(new Date(start.getTime() - 10 * DAY));
    const younger = await m.createStream(org.owner, "ten days old", [org.owner, org.member]);
    await sendN(younger, 3);
    m.clock.set(new Date(start.getTime() - 1 * DAY));
    await sendN(old, 3); // yesterday
    const fresh = await m.createStream(org.owner, "new channel", [org.owner, org.member]);
    await sendN(fresh, 2);
    m.clock.set(start);

    expect(await trafficOf("old channel")).toBe(3); // 12 in 4 weeks
    expect(await trafficOf("ten days old")).toBe(2); // 3 in 10 days, per 7
    expect(await trafficOf("new channel")).toBeNull();
    // A count is reused for ten minutes (Zulip's figure comes from periodically filled analytics).
    await sendN(old, 8);
    expect(await trafficOf("old channel")).toBe(3);
    m.clock.set(new Date(start.getTime() + 11 * 60_000));
    expect(await trafficOf("old channel")).toBe(5); // 20 in 4 weeks
    m.clock.set(new Date(start.getTime() + 30 * DAY));
    expect(await trafficOf("old channel")).toBe(0);
    m.clock.set(start);
  });
});
