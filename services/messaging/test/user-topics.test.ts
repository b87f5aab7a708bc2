import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let general: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member]);
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

const setPolicy = (who: Org["member"], topic: string, policy: number, streamId = general) =>
  m.call("POST", "/user_topics", who, { stream_id: streamId, topic, visibility_policy: policy });

describe("POST /user_topics", () => {
  it("a change sends user_topic and the legacy muted_topics; setting the same policy again sends nothing", async () => {
    await m.ok(await setPolicy(org.member, "noise", 1));
    const events = await m.clientEvents();
    expect(events.map((e) => e.event.type)).toEqual(["user_topic", "muted_topics"]);
    expect(events[0].event).toMatchObject({ stream_id: general, topic_name: "noise", visibility_policy: 1 });
    expect(events.every((e) => e.users.length === 1 && e.users[0] === org.member.user_id)).toBe(true);

    m.clock.advance(60_000);
    await m.ok(await setPolicy(org.member, "NOISE", 1));
    expect(await m.clientEvents()).toEqual([]);
    const row = await m.deps.pool.query("SELECT topic_name, last_updated FROM user_topics WHERE user_id = $1", [org.member.user_id]);
    // Nothing changed, not even the time of the last change.
    expect(row.rows).toEqual([{ topic_name: "noise", last_updated: expect.any(Date) }]);
    expect(Math.floor(row.rows[0].last_updated.getTime() / 1000)).toBe(events[0].event.last_updated);

    await m.ok(await setPolicy(org.member, "noise", 0));
    expect((await m.clientEvents()).map((e) => e.event)).toEqual([
      { type: "user_topic", stream_id: general, topic_name: "noise", last_updated: expect.any(Number), visibility_policy: 0 },
      { type: "muted_topics", muted_topics: [] },
    ]);
  });

  it("clearing a policy one does not hold succeeds and sends nothing", async () => {
    await m.ok(await setPolicy(org.member, "never-set", 0));
    expect(await m.clientEvents()).toEqual([]);
  });
});
