import { describe, expect, it } from "vitest";
import { aggregateUnread, compareCodePoints, UnreadMsgs, type UnreadEntry } from "./unread";

const stream = (id: number, streamId: number, topic: string, over: Partial<UnreadEntry> = {}): UnreadEntry =>
  ({ id, kind: "stream", streamId, topic, counted: true, listed: false, ...over }) as UnreadEntry;
const pm = (id: number, other: number, over: Partial<UnreadEntry> = {}): UnreadEntry => ({ id, kind: "pm", other, counted: true, listed: false, ...over }) as UnreadEntry;
const huddle = (id: number, key: string): UnreadEntry => ({ id, kind: "huddle", key, counted: true, listed: false });

describe("aggregateUnread (Zulip's aggregate_unread_data)", () => {
  it("sorts channel buckets by (stream_id, lower-cased topic), whatever the message order", () => {
    const got = aggregateUnread([stream(1, 9, "zebra"), stream(2, 4, "b"), stream(3, 9, "Apple"), stream(4, 4, "A"), stream(5, 9, "apple")], false);
    expect(got.streams).toEqual([
      { stream_id: 4, topic: "A", unread_message_ids: [4] },
      { stream_id: 4, topic: "b", unread_message_ids: [2] },
      { stream_id: 9, topic: "Apple", unread_message_ids: [3, 5] },
      { stream_id: 9, topic: "zebra", unread_message_ids: [1] },
    ]);
  });

  it("groups topics case-insensitively under the oldest unread message's spelling, ids ascending", () => {
    const got = aggregateUnread([stream(30, 1, "lunch"), stream(10, 1, "LUNCH"), stream(20, 1, "Lunch")], false);
    expect(got.streams).toEqual([{ stream_id: 1, topic: "LUNCH", unread_message_ids: [10, 20, 30] }]);
  });

  it("sorts direct buckets by other user id and group buckets by user_ids_string as a string", () => {
    const got = aggregateUnread([pm(5, 30), pm(1, 4), pm(3, 30), huddle(2, "10,2,3"), huddle(4, "1,2,3"), huddle(6, "1,20,3")], false);
    expect(got.pms).toEqual([
      { other_user_id: 4, sender_id: 4, unread_message_ids: [1] },
      { other_user_id: 30, sender_id: 30, unread_message_ids: [3, 5] },
    ]);
    // "1,2,3" < "1,20,3" < "10,2,3": ',' sorts before digits, as in Python.
    expect(got.huddles.map((h) => h.user_ids_string)).toEqual(["1,2,3", "1,20,3", "10,2,3"]);
  });

  it("counts what is counted, lists mentions ascending, passes the truncation flag on", () => {
    const got = aggregateUnread([stream(7, 1, "t", { counted: false, listed: true }), pm(3, 2, { listed: true }), stream(5, 1, "t", { counted: false })], true);
    expect(got).toMatchObject({ count: 1, mentions: [3, 7], old_unreads_missing: true });
    expect(UnreadMsgs.parse(got)).toEqual(got);
    expect(aggregateUnread([], false)).toEqual({ count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false });
  });

  it("orders topics by code point, as Python compares strings", () => {
    const astral = "\u{1F600}";
    const high = "\uFF01";
    expect(high < astral).toBe(false); // JavaScript's own order disagrees
    expect(compareCodePoints(high, astral)).toBeLessThan(0);
    expect(compareCodePoints("a", "ab")).toBeLessThan(0);
    expect(compareCodePoints("b", "a")).toBeGreaterThan(0);
    expect(aggregateUnread([stream(1, 1, astral), stream(2, 1, high)], false).streams.map((s) => s.topic)).toEqual([high, astral]);
  });
});
