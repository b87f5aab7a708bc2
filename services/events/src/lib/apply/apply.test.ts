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

  it("takes the custom emoji dictionary of a realm_emoji event whole; reactions and submessages change no state", () => {
    const state: Record<string, unknown> = { realm_emoji: {} };
    const emoji = { "3": { id: "3", name: "parrot", source_url: "/user_avatars/2/emoji/images/3.gif", still_url: null, deactivated: true, author_id: 6 } };
    expect(applyEvent(state, { id: 1, type: "realm_emoji", op: "update", realm_emoji: emoji }, ctx)).toBe(true);
    expect(state.realm_emoji).toEqual(emoji);
    const reaction = { id: 2, type: "reaction", op: "add", user_id: 6, message_id: 9, emoji_name: "smile", emoji_code: "1f642", reaction_type: "unicode_emoji" };
    expect(applyEvent(state, reaction, ctx)).toBe(true);
    const vote = { id: 3, type: "submessage", msg_type: "widget", message_id: 9, submessage_id: 2, sender_id: 6, content: "{}" };
    expect(applyEvent(state, vote, ctx)).toBe(true);
    expect(state).toEqual({ realm_emoji: emoji });
  });

  it("skips types whose state was not fetched only by stopping", () => {
    const state = { max_message_id: 3 };
    expect(applyEvent(state, { id: 1, type: "drafts", op: "remove", draft_id: 1 }, { ...ctx, fetchTypes: ["message"] })).toBe(false);
    expect(applyEvent(state, { id: 2, type: "heartbeat" }, { ...ctx, fetchTypes: ["message"] })).toBe(true);
  });
});

describe("unread_msgs kept as a fresh register shows it", () => {
  const inChannel = (id: number, streamId: number, topic: string, flags: string[] = []) => ({
    id: 100 + id,
    type: "message",
    flags,
    message: { id, type: "stream", stream_id: streamId, subject: topic, display_recipient: "x", sender_id: 6 },
  });
  const withChannels = () => ({
    ...baseState(),
    subscriptions: [{ stream_id: 7, name: "Denmark", is_muted: false }, { stream_id: 3, name: "Austria", is_muted: false }],
  });

  it("sorts buckets by (stream_id, lower-cased topic) and other user id, grouping topics case-insensitively", () => {
    const state = withChannels();
    applyEvents(state, [inChannel(11, 7, "zebra"), dm(12, 9), inChannel(13, 3, "Lunch"), dm(14, 6), inChannel(15, 7, "Apple"), inChannel(16, 3, "lunch")], ctx);
    expect(state.unread_msgs).toEqual({
      count: 6,
      pms: [
        { other_user_id: 6, sender_id: 6, unread_message_ids: [14] },
        { other_user_id: 9, sender_id: 9, unread_message_ids: [12] },
      ],
      streams: [
        { stream_id: 3, topic: "Lunch", unread_message_ids: [13, 16] },
        { stream_id: 7, topic: "Apple", unread_message_ids: [15] },
        { stream_id: 7, topic: "zebra", unread_message_ids: [11] },
      ],
      huddles: [],
      mentions: [],
      old_unreads_missing: false,
    });
  });

  it("lists a new message's wildcard mention only outside muted topics, as register does", () => {
    const state = withChannels();
    state.user_topics = [{ stream_id: 7, topic_name: "Noise", visibility_policy: 1, last_updated: 1 }];
    applyEvents(state, [inChannel(11, 7, "noise", ["stream_wildcard_mentioned", "wildcard_mentioned"]), inChannel(12, 7, "noise", ["mentioned"]), inChannel(13, 3, "x", ["topic_wildcard_mentioned"])], ctx);
    expect(state.unread_msgs).toMatchObject({ count: 1, mentions: [12, 13] });
  });

  it("keeps register's mentions through muting changes, and leaves out channels the user left", () => {
    const state = withChannels();
    state.unread_msgs = { count: 2, pms: [], streams: [{ stream_id: 3, topic: "a", unread_message_ids: [10] }, { stream_id: 7, topic: "t", unread_message_ids: [11] }], huddles: [], mentions: [11], old_unreads_missing: false } as any;
    expect(applyEvent(state, { id: 1, type: "subscription", op: "update", stream_id: 7, property: "is_muted", value: true }, ctx)).toBe(true);
    expect(state.unread_msgs).toMatchObject({ count: 1, mentions: [11] });
    expect(applyEvent(state, { id: 2, type: "subscription", op: "remove", subscriptions: [{ stream_id: 3, name: "Austria" }] }, ctx)).toBe(true);
    expect(state.unread_msgs).toEqual({ count: 0, pms: [], streams: [{ stream_id: 7, topic: "t", unread_message_ids: [11] }], huddles: [], mentions: [11], old_unreads_missing: false });
  });

  it("moves unread messages with update_message, re-sorting, and forgets those moved into a channel the user left", () => {
    const state = { ...withChannels(), unsubscribed: [{ stream_id: 5, name: "Left", is_muted: false }] };
    applyEvents(state, [inChannel(11, 7, "old"), inChannel(12, 7, "old"), inChannel(13, 7, "keep")], ctx);
    const move = { id: 1, type: "update_message", user_id: 6, message_id: 11, message_ids: [11, 12], flags: ["mentioned"], edit_timestamp: 1, rendering_only: false, stream_id: 7, orig_subject: "old" };
    expect(applyEvent(state, { ...move, new_stream_id: 3, subject: "New" }, ctx)).toBe(true);
    expect(state.unread_msgs).toMatchObject({
      streams: [
        { stream_id: 3, topic: "New", unread_message_ids: [11, 12] },
        { stream_id: 7, topic: "keep", unread_message_ids: [13] },
      ],
      mentions: [11],
    });
    // Seen twice (in the fetched state and in the queue): the same result.
    const again = structuredClone(state);
    expect(applyEvent(again, { ...move, stream_id: 3, new_stream_id: 3, subject: "New" }, ctx)).toBe(true);
    expect(again).toEqual(state);
    expect(applyEvent(state, { ...move, message_ids: [12], message_id: 12, stream_id: 3, new_stream_id: 5, flags: [] }, ctx)).toBe(true);
    expect(state.unread_msgs.streams.map((s: any) => s.unread_message_ids)).toEqual([[11], [13]]);
    expect(state.unread_msgs.count).toBe(2);
    // A content edit without a move changes only whether the message mentions the user.
    expect(applyEvent(state, { id: 2, type: "update_message", user_id: 6, message_id: 13, message_ids: [13], flags: ["mentioned"], edit_timestamp: 2, rendering_only: false, content: "@me" }, ctx)).toBe(true);
    expect(state.unread_msgs.mentions).toEqual([11, 13]);
  });

  it("forgets messages moved from a channel the user is in to one they are not in (their rows are gone), the newest left to the database", () => {
    const state = { ...withChannels(), starred_messages: [12], never_subscribed: [{ stream_id: 9, name: "Elsewhere" }] };
    applyEvents(state, [inChannel(11, 7, "old"), inChannel(12, 7, "old"), inChannel(13, 7, "keep")], ctx);
    const move = { id: 1, type: "update_message", user_id: 6, message_id: 11, message_ids: [11, 12], edit_timestamp: 1, rendering_only: false, stream_id: 7, new_stream_id: 9, orig_subject: "old" };
    expect(applyEvent(state, move, ctx)).toBe(true);
    expect(state.unread_msgs).toMatchObject({ count: 1, streams: [{ stream_id: 7, topic: "keep", unread_message_ids: [13] }] });
    expect(state.starred_messages).toEqual([]);
    expect(applyEvent(state, { ...move, message_id: 13, message_ids: [13] }, ctx)).toBe(false);
    // Without the subscriptions, whether the user kept them is unknown.
    const blind = { max_message_id: 20, starred_messages: [11] };
    expect(applyEvent(blind, { ...move, message_ids: [11] }, ctx)).toBe(false);
    expect(applyEvent(blind, { ...move, message_ids: [12] }, ctx)).toBe(true);
  });

  it("takes a message marked unread as its details place it: listed in mentions or not, counted unless muted", () => {
    const state = withChannels();
    state.user_topics = [{ stream_id: 7, topic_name: "hush", visibility_policy: 1, last_updated: 1 }];
    const details = { "11": { type: "stream", stream_id: 7, topic: "hush", unmuted_stream_msg: false, mentioned: true }, "12": { type: "stream", stream_id: 7, topic: "hush", unmuted_stream_msg: false } };
    expect(applyEvent(state, { id: 1, type: "update_message_flags", op: "remove", operation: "remove", flag: "read", messages: [11, 12], all: false, message_details: details }, ctx)).toBe(true);
    expect(state.unread_msgs).toMatchObject({ count: 0, mentions: [11] });
    expect(applyEvent(state, { id: 2, type: "user_topic", stream_id: 7, topic_name: "hush", last_updated: 2, visibility_policy: 0 }, ctx)).toBe(true);
    expect(state.unread_msgs).toMatchObject({ count: 2, mentions: [11] });
  });

  it("keeps the newest 50,000, and cannot shrink a list register had to cut", () => {
    const state = baseState();
    const ids = Array.from({ length: 50000 }, (_, i) => i + 1);
    state.unread_msgs = { count: 50000, pms: [{ other_user_id: 6, sender_id: 6, unread_message_ids: ids }], streams: [], huddles: [], mentions: [], old_unreads_missing: false } as any;
    state.max_message_id = 50000;
    expect(applyEvent(state, dm(50001, 6), ctx)).toBe(true);
    expect(state.unread_msgs).toMatchObject({ count: 50000, old_unreads_missing: true });
    expect((state.unread_msgs.pms[0] as any).unread_message_ids[0]).toBe(2);
    const read = { id: 1, type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [7], all: false };
    expect(applyEvent(state, read, ctx)).toBe(false);
    expect(applyEvent(state, { ...read, messages: [], all: true }, ctx)).toBe(true);
    expect(state.unread_msgs).toMatchObject({ count: 0, pms: [], old_unreads_missing: false });
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

  it("an address change (delivery email, the new Gravatar, then the new API email): null once both addresses agree", () => {
    const s = state();
    const update = (person: Record<string, unknown>) => applyEvent(s, { id: 1, type: "realm_user", op: "update", person: { user_id: 5, ...person } }, ctx);
    expect(update({ delivery_email: "new@example.com" })).toBe(true);
    expect(update(avatarEvent(5).person)).toBe(true);
    // The API email is still the old one: the client could not compute this Gravatar yet.
    expect(s.realm_users[0].avatar_url).toBe(gravatar);
    expect(update({ new_email: "new@example.com" })).toBe(true);
    expect(s.realm_users[0]).toMatchObject({ email: "new@example.com", delivery_email: "new@example.com", avatar_url: null });
    // A user whose API email is a dummy one keeps the URL.
    const hidden = { id: 1, type: "realm_user", op: "update" };
    expect(applyEvent(s, { ...hidden, person: { user_id: 7, delivery_email: "eight@example.com" } }, ctx)).toBe(true);
    expect(applyEvent(s, { ...hidden, person: avatarEvent(7).person }, ctx)).toBe(true);
    expect(s.realm_users[2].avatar_url).toBe(gravatar);
  });
});

describe("realm_user remove (a guest lost access to a user)", () => {
  const remove = { id: 1, type: "realm_user", op: "remove", person: { user_id: 6, full_name: "Unknown user" } };
  const state = () => ({ realm_users: [{ user_id: 5 }, { user_id: 6 }] });

  it("drops the user for a client with user_list_incomplete", () => {
    const s = state();
    expect(applyEvent(s, remove, { ...ctx, userListIncomplete: true })).toBe(true);
    expect(s.realm_users).toEqual([{ user_id: 5 }]);
  });

  it("drops a deactivated user too (one a member who became a guest no longer accesses)", () => {
    const s = { realm_users: [{ user_id: 5 }], realm_non_active_users: [{ user_id: 6 }, { user_id: 7 }] };
    expect(applyEvent(s, remove, { ...ctx, userListIncomplete: true })).toBe(true);
    expect(s).toEqual({ realm_users: [{ user_id: 5 }], realm_non_active_users: [{ user_id: 7 }] });
  });

  it("is left to the others' clients, whose lists show accounts' stand-in instead", () => {
    const s = state();
    expect(applyEvent(s, remove, ctx)).toBe(false);
    expect(s.realm_users).toEqual([{ user_id: 5 }, { user_id: 6 }]);
  });

  describe("the user's status and presence leave the state, as a fresh register leaves them out", () => {
    const website = { client: "website", status: "active", timestamp: 9, pushable: false };
    const legacy = () => ({ aggregated: { client: "website", status: "active", timestamp: 9 }, website });
    const full = () => ({
      realm_users: [
        { user_id: 5, email: "me@example.com" },
        { user_id: 6, email: "user6@org.invalid" },
      ],
      user_status: { "5": { status_text: "mine" }, "6": { away: true, status_text: "out" } } as Record<string, unknown>,
      presences: {} as Record<string, unknown>,
    });
    const incomplete = { ...ctx, userListIncomplete: true };

    it("status always; presence by id where user access limits presence", () => {
      const s = { ...full(), presences: { "5": { active_timestamp: 9, idle_timestamp: 9 }, "6": { active_timestamp: 9, idle_timestamp: 9 } } };
      expect(applyEvent(s, remove, { ...incomplete, slimPresence: true, accessLimitsPresence: true })).toBe(true);
      expect(s).toEqual({
        realm_users: [{ user_id: 5, email: "me@example.com" }],
        user_status: { "5": { status_text: "mine" } },
        presences: { "5": { active_timestamp: 9, idle_timestamp: 9 } },
      });
    });

    it("legacy presence is keyed by the API email the user list held", () => {
      const s = { ...full(), presences: { "me@example.com": legacy(), "user6@org.invalid": legacy() } };
      expect(applyEvent(s, remove, { ...incomplete, accessLimitsPresence: true })).toBe(true);
      expect(Object.keys(s.presences)).toEqual(["me@example.com"]);
      expect(s.user_status).toEqual({ "5": { status_text: "mine" } });
    });

    it("a deactivated user's entries go too", () => {
      const s = {
        realm_users: [{ user_id: 5, email: "me@example.com" }],
        realm_non_active_users: [{ user_id: 6, email: "user6@org.invalid" }],
        user_status: { "6": { status_text: "gone" } } as Record<string, unknown>,
        presences: { "user6@org.invalid": legacy() } as Record<string, unknown>,
      };
      expect(applyEvent(s, remove, { ...incomplete, accessLimitsPresence: true })).toBe(true);
      expect(s).toEqual({ realm_users: [{ user_id: 5, email: "me@example.com" }], realm_non_active_users: [], user_status: {}, presences: {} });
    });

    it("presence stays where the server does not limit it with user access", () => {
      const s = { ...full(), presences: { "6": { active_timestamp: 9, idle_timestamp: 9 } } };
      expect(applyEvent(s, remove, { ...incomplete, slimPresence: true, accessLimitsPresence: false })).toBe(true);
      expect(s.presences).toEqual({ "6": { active_timestamp: 9, idle_timestamp: 9 } });
      expect(s.user_status).toEqual({ "5": { status_text: "mine" } });
    });

    it("is idempotent: a state fetched after the removal stays as it was", () => {
      const s = { realm_users: [{ user_id: 5, email: "me@example.com" }], user_status: { "5": { status_text: "mine" } }, presences: { "me@example.com": legacy() } };
      const before = structuredClone(s);
      expect(applyEvent(s, remove, { ...incomplete, accessLimitsPresence: true })).toBe(true);
      expect(s).toEqual(before);
    });

    it("without user_list_incomplete the event is the client's, and the state is untouched", () => {
      const s = full();
      const before = structuredClone(s);
      expect(applyEvent(s, remove, { ...ctx, accessLimitsPresence: true })).toBe(false);
      expect(s).toEqual(before);
    });
  });
});

describe("presence", () => {
  const website = (status: string, timestamp: number) => ({ client: "website", status, timestamp, pushable: false });
  const event = (status: string, timestamp: number) => ({ type: "presence", user_id: 6, email: "a@b.c", server_timestamp: timestamp, presence: { website: website(status, timestamp) } });

  it("legacy state takes the event's entry, keyed by email, with its aggregated copy", () => {
    const state = { presences: { "a@b.c": { aggregated: { client: "website", status: "active", timestamp: 1 }, website: website("active", 1) } } };
    expect(applyEvent(state, event("idle", 500), ctx)).toBe(true);
    expect(state.presences).toEqual({ "a@b.c": { aggregated: { client: "website", status: "idle", timestamp: 500 }, website: website("idle", 500) } });
  });

  it("modern state (slim_presence) takes an active report as both times; an idle one is left to the client", () => {
    const slim = { ...ctx, slimPresence: true };
    const state: Record<string, any> = { presences: { "6": { active_timestamp: 1, idle_timestamp: 400 } } };
    const { email: _email, ...slimEvent } = event("active", 500);
    expect(applyEvent(state, slimEvent, slim)).toBe(true);
    expect(state.presences).toEqual({ "6": { active_timestamp: 500, idle_timestamp: 500 } });
    expect(applyEvent(state, event("idle", 600), slim)).toBe(false);
    expect(state.presences["6"]).toEqual({ active_timestamp: 500, idle_timestamp: 500 });
  });

  it("is not applied when presence state was not fetched", () => {
    expect(applyEvent({}, event("active", 500), { ...ctx, fetchTypes: ["message"] })).toBe(false);
  });
});
