import { describe, expect, it } from "vitest";
import { applyEvent, applyEvents, type ApplyContext } from "./index";

const ctx: ApplyContext = { userId: 5, fetchTypes: null, includeSubscribers: false, clientGravatar: true };

const dm = (id: number, from: number, flags: string[] = []) => ({
  id: 100 + id,
  type: "message",
  flags,
  message: { id, type: "private", display_recipient: [{ id: 5 }, { id: from }], sender_id: from },
});
const channelMessage = (id: number, topic: string, flags: string[] = []) => ({
  id: 100 + id,
  type: "message",
  flags,
  message: { id, type: "stream", stream_id: 7, subject: topic, display_recipient: "Denmark", sender_id: 6 },
});

function baseState() {
  return {
    max_message_id: 10,
    unread_msgs: { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false },
    recent_private_conversations: [],
    starred_messages: [],
    subscriptions: [{ stream_id: 7, name: "Denmark", is_muted: false }],
    unsubscribed: [],
    never_subscribed: [],
    user_topics: [] as any[],
    drafts: [],
    user_status: {} as Record<string, unknown>,
  };
}

describe("applyEvents", () => {
  it("applies in order and stops before the first event it cannot apply", () => {
    const state = baseState();
    const last = applyEvents(state, [dm(11, 6), { id: 200, type: "no_such_type" }, dm(12, 6)], ctx);
    expect(last).toBe(111);
    expect(state.max_message_id).toBe(11);
    expect(state.unread_msgs.pms).toEqual([{ other_user_id: 6, sender_id: 6, unread_message_ids: [11] }]);
  });

  it("is idempotent for a message already in the state", () => {
    const once = baseState();
    applyEvents(once, [dm(11, 6), channelMessage(12, "castle", ["mentioned"])], ctx);
    const twice = structuredClone(once);
    applyEvents(twice, [dm(11, 6), channelMessage(12, "castle", ["mentioned"])], ctx);
    expect(twice).toEqual(once);
    expect(once.unread_msgs).toMatchObject({ count: 2, mentions: [12], streams: [{ stream_id: 7, topic: "castle", unread_message_ids: [12] }] });
    expect(once.recent_private_conversations).toEqual([{ max_message_id: 11, user_ids: [6] }]);
  });

  it("does not count messages in muted topics, and recounts when muting changes", () => {
    const state = baseState();
    applyEvents(state, [channelMessage(11, "noise"), channelMessage(12, "castle")], ctx);
    expect(state.unread_msgs.count).toBe(2);
    expect(applyEvent(state, { id: 1, type: "user_topic", stream_id: 7, topic_name: "Noise", last_updated: 1, visibility_policy: 1 }, ctx)).toBe(true);
    expect(state.unread_msgs.count).toBe(1);
    expect(applyEvent(state, { id: 2, type: "subscription", op: "update", stream_id: 7, property: "is_muted", value: true }, ctx)).toBe(true);
    expect(state.unread_msgs.count).toBe(0);
  });

  it("replaces the legacy muted_topics list with the event's, and leaves it out when it was not fetched", () => {
    const state = { ...baseState(), muted_topics: [["Denmark", "old", 1]] };
    expect(applyEvent(state, { id: 1, type: "muted_topics", muted_topics: [["Denmark", "noise", 2]] }, ctx)).toBe(true);
    expect(state.muted_topics).toEqual([["Denmark", "noise", 2]]);
    const without = baseState();
    expect(applyEvent(without, { id: 1, type: "muted_topics", muted_topics: [["Denmark", "noise", 2]] }, ctx)).toBe(true);
    expect(without).not.toHaveProperty("muted_topics");
    expect(applyEvent(baseState(), { id: 1, type: "muted_topics", muted_topics: [] }, { ...ctx, fetchTypes: ["user_topic"] })).toBe(false);
  });

  it("re-adds messages marked unread in id order, grouped as register groups them", () => {
    const state = baseState();
    applyEvents(state, [dm(11, 6), dm(13, 6)], ctx);
    applyEvent(state, { id: 1, type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [11, 13], all: false }, ctx);
    expect(state.unread_msgs.count).toBe(0);
    const details = { "13": { type: "private", user_ids: [6] }, "11": { type: "private", user_ids: [6] }, "12": { type: "private", user_ids: [6, 8] } };
    applyEvent(state, { id: 2, type: "update_message_flags", op: "remove", operation: "remove", flag: "read", messages: [13, 11, 12], all: false, message_details: details }, ctx);
    expect(state.unread_msgs).toMatchObject({
      count: 3,
      pms: [{ other_user_id: 6, unread_message_ids: [11, 13] }],
      huddles: [{ user_ids_string: "5,6,8", unread_message_ids: [12] }],
    });
  });

  it("refuses what only the database knows, leaving the state as it was", () => {
    const state = baseState();
    applyEvents(state, [dm(11, 6)], ctx);
    const before = structuredClone(state);
    // The newest message deleted: the new maximum is not in the state.
    expect(applyEvent(state, { id: 3, type: "delete_message", message_type: "private", message_ids: [11] }, ctx)).toBe(false);
    expect(state).toEqual(before);
    // Channel unreads without the subscriptions to tell muting.
    const bare = { max_message_id: 1, unread_msgs: before.unread_msgs };
    expect(applyEvent(bare, channelMessage(20, "x"), { ...ctx, fetchTypes: ["message", "update_message_flags"] })).toBe(false);
  });

  it("keeps one copy of subscriptions and drafts seen twice, sorted as register sorts them", () => {
    const state = baseState();
    const add = { id: 1, type: "subscription", op: "add", subscriptions: [{ stream_id: 9, name: "Apple" }] };
    applyEvent(state, add, ctx);
    applyEvent(state, add, ctx);
    expect(state.subscriptions.map((s) => s.name)).toEqual(["Apple", "Denmark"]);
    const draft = { id: 2, type: "drafts", op: "add", drafts: [{ id: 1, timestamp: 5 }, { id: 2, timestamp: 9 }] };
    applyEvent(state, draft, ctx);
    applyEvent(state, draft, ctx);
    expect(state.drafts).toEqual([{ id: 2, timestamp: 9 }, { id: 1, timestamp: 5 }]);
  });

  it("keeps user_status sparse", () => {
    const state = baseState();
    applyEvent(state, { id: 1, type: "user_status", user_id: 6, away: true, status_text: "out" }, ctx);
    expect(state.user_status).toEqual({ "6": { away: true, status_text: "out" } });
    applyEvent(state, { id: 2, type: "user_status", user_id: 6, away: false, status_text: "" }, ctx);
    expect(state.user_status).toEqual({});
  });

  it("skips types whose state was not fetched only by stopping", () => {
    const state = { max_message_id: 3 };
    expect(applyEvent(state, { id: 1, type: "drafts", op: "remove", draft_id: 1 }, { ...ctx, fetchTypes: ["message"] })).toBe(false);
    expect(applyEvent(state, { id: 2, type: "heartbeat" }, { ...ctx, fetchTypes: ["message"] })).toBe(true);
  });
});

describe("realm_user avatar updates with client_gravatar", () => {
  const gravatar = "https://secure.gravatar.com/avatar/0123456789abcdef0123456789abcdef?d=identicon&version=3";
  const avatarEvent = (userId: number) => ({
    id: 1, type: "realm_user", op: "update",
    person: { user_id: userId, avatar_url: gravatar, avatar_source: "G", avatar_url_medium: `${gravatar}&s=500`, avatar_version: 3 },
  });
  const state = () => ({
    avatar_url: "/user_avatars/1/x.png?version=2",
    avatar_source: "U",
    realm_users: [
      { user_id: 5, email: "me@example.com", delivery_email: "me@example.com", avatar_url: "/user_avatars/1/x.png?version=2" },
      { user_id: 6, email: "user6@org.invalid", delivery_email: null, avatar_url: "/user_avatars/1/y.png?version=2" },
      { user_id: 7, email: "user7@org.invalid", delivery_email: "seven@example.com", avatar_url: "/user_avatars/1/z.png?version=2" },
    ],
  });

  it("nulls the URL in the user list only where the API email is the real one; the own-user keys keep it", () => {
    const s = state();
    for (const id of [5, 6, 7]) expect(applyEvent(s, avatarEvent(id), ctx)).toBe(true);
    expect(s.realm_users.map((u) => u.avatar_url)).toEqual([null, gravatar, gravatar]);
    expect(s).toMatchObject({ avatar_url: gravatar, avatar_source: "G" });
  });
});
