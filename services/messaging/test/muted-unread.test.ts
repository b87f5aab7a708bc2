import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let general: number;
let quiet: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member]);
  quiet = await m.createStream(org.owner, "quiet", [org.owner, org.member]);
});
afterAll(async () => m?.close());

const fetch = async (params: Record<string, unknown>) => m.ok(await m.call("GET", "/messages", org.member, params));
const setPolicy = async (streamId: number, topic: string, policy: number) =>
  m.ok(await m.call("POST", "/user_topics", org.member, { stream_id: streamId, topic, visibility_policy: policy }));

describe("muted channels and topics (Zulip's exclude_muting_conditions)", () => {
  it("first_unread and in:home skip what the user muted, except topics they unmuted or follow", async () => {
    await m.ok(await m.call("POST", "/users/me/subscriptions/properties", org.member, {
      subscription_data: JSON.stringify([{ stream_id: quiet, property: "is_muted", value: true }]),
    }));
    await setPolicy(general, "boring", 1);
    const send = (to: string, topic: string) => m.send(org.owner, { type: "stream", to, topic, content: `in ${to} > ${topic}` });
    const mutedChannel = await send("quiet", "chatter");
    const mutedTopic = await send("general", "boring");
    const visible = await send("general", "news");

    const home = await fetch({ anchor: "first_unread", num_before: 0, num_after: 0 });
    expect(home.anchor).toBe(visible);
    const inHome = await fetch({ anchor: "newest", num_before: 10, narrow: JSON.stringify([{ operator: "in", operand: "home" }]) });
    expect(inHome.messages.map((x: { id: number }) => x.id)).toEqual([visible]);

    // A channel narrow shows the muted channel, and a topic narrow the muted topic.
    expect((await fetch({ anchor: "first_unread", num_before: 0, num_after: 0, narrow: JSON.stringify([["channel", "quiet"]]) })).anchor).toBe(mutedChannel);
    const topic = JSON.stringify([["channel", "general"], ["topic", "boring"]]);
    expect((await fetch({ anchor: "first_unread", num_before: 0, num_after: 0, narrow: topic })).anchor).toBe(mutedTopic);
    expect((await fetch({ anchor: "first_unread", num_before: 0, num_after: 0, narrow: JSON.stringify([["channel", "general"]]) })).anchor).toBe(visible);

    // A topic unmuted in the muted channel counts again.
    await setPolicy(quiet, "chatter", 2);
    expect((await fetch({ anchor: "first_unread", num_before: 0, num_after: 0 })).anchor).toBe(mutedChannel);
  });
});
