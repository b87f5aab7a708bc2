import { describe, expect, it } from "vitest";
import { applyEvent, type ApplyContext } from "./index";

const ctx: ApplyContext = { userId: 5, fetchTypes: null, includeSubscribers: false, clientGravatar: true };

const channelMessage = (id: number, streamId: number) => ({
  id: 100 + id,
  type: "message",
  flags: [],
  message: { id, type: "stream", stream_id: streamId, subject: "channel events", display_recipient: "x", sender_id: 6 },
});

function state() {
  return {
    max_message_id: 10,
    unread_msgs: { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false },
    streams: [{ stream_id: 7, first_message_id: null }, { stream_id: 8, first_message_id: 3 }],
    subscriptions: [{ stream_id: 7, name: "new", is_muted: false, first_message_id: null }, { stream_id: 8, name: "old", is_muted: false, first_message_id: 3 }],
    unsubscribed: [],
    never_subscribed: [],
    user_topics: [] as any[],
  };
}

describe("channel messages in a registered state", () => {
  it("a new channel's first message sets its first_message_id; a channel that has one keeps it", () => {
    const s = state();
    expect(applyEvent(s, channelMessage(11, 7), ctx)).toBe(true);
    expect(applyEvent(s, channelMessage(12, 8), ctx)).toBe(true);
    expect(applyEvent(s, channelMessage(13, 7), ctx)).toBe(true);
    expect(s.streams.map((c) => c.first_message_id)).toEqual([11, 3]);
    expect(s.subscriptions.map((c) => c.first_message_id)).toEqual([11, 3]);
  });

  it("a deleted channel's unread messages leave unread_msgs (messaging reads them for everyone)", () => {
    const s = state();
    applyEvent(s, channelMessage(11, 7), ctx);
    applyEvent(s, channelMessage(12, 8), ctx);
    expect(applyEvent(s, { id: 1, type: "stream", op: "delete", streams: [{ stream_id: 7, name: "new" }] }, ctx)).toBe(true);
    expect(s.unread_msgs).toMatchObject({ count: 1, streams: [{ stream_id: 8, unread_message_ids: [12] }] });
    expect(s.subscriptions.map((c) => c.stream_id)).toEqual([8]);
  });
});
