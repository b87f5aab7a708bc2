import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

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

describe("PATCH /users/me/subscriptions/muted_topics", () => {
  const mute = (who: Org["member"], params: Record<string, unknown>) => m.call("PATCH", "/users/me/subscriptions/muted_topics", who, params);

  it("mutes by channel id or name, once; unmutes", async () => {
    expect(await m.ok(await mute(org.member, { stream_id: general, topic: "lunch", op: "add" }))).toEqual({ result: "success", msg: "" });
    const events = await m.clientEvents();
    expect(events[0].event).toMatchObject({ type: "user_topic", stream_id: general, topic_name: "lunch", visibility_policy: 1 });
    expect(events[1].event).toEqual({ type: "muted_topics", muted_topics: [["general", "lunch", expect.any(Number)]] });
    // Muting it again is no error and tells nobody anything (Zulip since feature level 169).
    await m.ok(await mute(org.member, { stream: "general", topic: "lunch", op: "add" }));
    expect(await m.clientEvents()).toEqual([]);
    await m.ok(await mute(org.member, { stream: "General", topic: "lunch", op: "remove" }));
    expect((await m.clientEvents()).map((e) => e.event.type)).toEqual(["user_topic", "muted_topics"]);
    // Unmuting a topic that is not muted is no error, and changes nothing.
    await m.ok(await mute(org.member, { stream_id: general, topic: "lunch", op: "remove" }));
    expect(await m.clientEvents()).toEqual([]);
  });

  it("wants exactly one of stream and stream_id, a channel one can see, and add or remove", async () => {
    expectError(await mute(org.member, { topic: "t", op: "add" }), 400, "BAD_REQUEST", "Please supply 'stream'.");
    expectError(await mute(org.member, { stream: "general", stream_id: general, topic: "t", op: "add" }), 400, "BAD_REQUEST", "Please choose one: 'stream' or 'stream_id'.");
    expectError(await mute(org.member, { stream_id: 999999, topic: "t", op: "add" }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await mute(org.member, { stream: "nowhere", topic: "t", op: "add" }), 400, "BAD_REQUEST", "Invalid channel name 'nowhere'");
    expectError(await mute(org.member, { stream_id: 999999, topic: "t", op: "remove" }), 400, "BAD_REQUEST", "Topic is not muted");
    expectError(await mute(org.member, { stream_id: general, topic: "t", op: "mute" }), 400, "BAD_REQUEST");
    expectError(await mute(org.member, { stream_id: general, op: "add" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'topic' argument");
    expect(await m.clientEvents()).toEqual([]);
  });

  it("a muted topic of a private channel one left can still be unmuted", async () => {
    const hush = await m.createStream(org.member, "hush", [org.member], { invite_only: true });
    await m.ok(await mute(org.member, { stream_id: hush, topic: "quiet", op: "add" }));
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.member, { subscriptions: JSON.stringify(["hush"]) }));
    expectError(await mute(org.member, { stream_id: hush, topic: "quiet", op: "add" }), 400, "BAD_REQUEST", "Invalid channel ID");
    await m.outbox();
    await m.ok(await mute(org.member, { stream_id: hush, topic: "quiet", op: "remove" }));
    expect((await m.clientEvents())[0].event).toMatchObject({ type: "user_topic", stream_id: hush, visibility_policy: 0 });
    // Others cannot tell the channel from a missing one.
    expectError(await mute(org.member2, { stream_id: hush, topic: "quiet", op: "remove" }), 400, "BAD_REQUEST", "Topic is not muted");
  });
});
