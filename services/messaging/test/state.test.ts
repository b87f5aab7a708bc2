import { AccountsUserCreated } from "@chat/contracts";
import { AmqpClient, createLogger, emitEvent, OutboxRelay, withTx } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeAccountsEvents } from "../src/consumers/accounts";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let general: number;
let secret: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member, org.member2]);
  secret = await m.createStream(org.owner, "secret", [org.owner, org.member], { invite_only: true });
});
afterAll(async () => m?.close());

const state = async (who: Org["member"], params: Record<string, unknown> = {}) => m.ok(await m.call("POST", "/internal/register_state/messaging", who, params));

describe("register state", () => {
  it("returns only the keys of the requested event types", async () => {
    const s = await state(org.member, { fetch_event_types: JSON.stringify(["message"]) });
    expect(Object.keys(s).sort()).toEqual(["max_message_id", "msg", "result"]);
    const all = await state(org.member);
    for (const key of ["subscriptions", "unsubscribed", "never_subscribed", "streams", "max_message_id", "unread_msgs", "starred_messages", "drafts", "user_topics", "recent_private_conversations"]) {
      expect(all, key).toHaveProperty(key);
    }
    // All event types: the legacy list too, since user_topic was not asked for by name (Zulip).
    expect(all.muted_topics).toEqual([]);
    const named = await state(org.member, { fetch_event_types: JSON.stringify(["user_topic", "muted_topics"]) });
    expect(named).toHaveProperty("user_topics");
    expect(named).not.toHaveProperty("muted_topics");
  });

  it("stop_words are the words the search leaves out, so a search for one alone finds nothing", async () => {
    const { stop_words: words } = await state(org.member, { fetch_event_types: JSON.stringify(["stop_words"]) });
    expect(words).toEqual(expect.arrayContaining(["the", "and", "of", "is"]));
    // PostgreSQL's own dictionary agrees: each one indexes to nothing.
    const { rows } = await m.deps.pool.query("SELECT w FROM unnest($1::text[]) AS w WHERE to_tsvector('english', w) <> ''::tsvector", [words]);
    expect(rows).toEqual([]);
    // In an organization of its own, so the other tests' unread counts stay as they are.
    const own = await m.createOrg();
    await m.createStream(own.owner, "general", [own.owner]);
    const id = await m.send(own.owner, { type: "stream", to: "general", topic: "stops", content: "the quick brown fox" });
    const search = async (text: string) =>
      (await m.ok(await m.call("GET", "/messages", own.owner, { anchor: "newest", num_before: 10, narrow: JSON.stringify([["search", text]]) }))).messages.map((x: any) => x.id);
    expect(await search("quick")).toContain(id);
    expect(await search("the")).toEqual([]);
  });

  it("subscriptions, never_subscribed and streams follow visibility", async () => {
    const member2 = await state(org.member2, { fetch_event_types: JSON.stringify(["subscription", "stream"]) });
    expect(member2.subscriptions.map((s: any) => s.name)).toEqual(["general"]);
    expect(member2.never_subscribed).toEqual([]);
    expect(member2.streams.map((s: any) => s.name)).toEqual(["general"]);
    const admin = await state(org.admin, { fetch_event_types: JSON.stringify(["subscription", "stream"]), include_subscribers: true });
    expect(admin.never_subscribed.map((s: any) => s.name)).toEqual(["general", "secret"]);
    expect(admin.never_subscribed.find((s: any) => s.name === "secret").subscribers).toEqual([org.owner.user_id, org.member.user_id].sort((a, b) => a - b));
    expect(admin.streams.map((s: any) => s.stream_id).sort()).toEqual([general, secret].sort());
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.member2, { subscriptions: JSON.stringify(["general"]) }));
    const after = await state(org.member2, { fetch_event_types: JSON.stringify(["subscription"]) });
    expect(after.subscriptions).toEqual([]);
    expect(after.unsubscribed.map((s: any) => s.name)).toEqual(["general"]);
    await m.ok(await m.call("POST", "/users/me/subscriptions", org.member2, { subscriptions: JSON.stringify([{ name: "general" }]) }));
  });

  it("unread_msgs groups unread messages by conversation and counts mentions", async () => {
    const a = await m.send(org.owner, { type: "stream", to: "general", topic: "Lunch", content: "@**Mel Member** food?" });
    const b = await m.send(org.owner, { type: "stream", to: "general", topic: "lunch", content: "now" });
    const c = await m.send(org.member2, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "hi" });
    const d = await m.send(org.member2, { type: "direct", to: JSON.stringify([org.member.user_id, org.owner.user_id]), content: "all of us" });
    const s = await state(org.member, { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) });
    expect(s.max_message_id).toBe(d);
    expect(s.unread_msgs).toEqual({
      count: 4,
      pms: [{ other_user_id: org.member2.user_id, sender_id: org.member2.user_id, unread_message_ids: [c] }],
      streams: [{ stream_id: general, topic: "Lunch", unread_message_ids: [a, b] }],
      huddles: [{ user_ids_string: [org.owner, org.member, org.member2].map((u) => u.user_id).sort((x, y) => x - y).join(","), unread_message_ids: [d] }],
      mentions: [a],
      old_unreads_missing: false,
    });
    // A muted channel's messages stay listed but do not count, except in topics the user follows
    // (being mentioned in "Lunch" made member follow it).
    await m.send(org.owner, { type: "stream", to: "general", topic: "other", content: "meh" });
    await m.ok(await m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: JSON.stringify([{ stream_id: general, property: "is_muted", value: true }]) }));
    const muted = (await state(org.member, { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) })).unread_msgs;
    expect(muted.count).toBe(4);
    expect(muted.streams).toHaveLength(2);
    await m.ok(await m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: JSON.stringify([{ stream_id: general, property: "is_muted", value: false }]) }));
    const rpc = (await state(org.member, { fetch_event_types: JSON.stringify(["recent_private_conversations"]) })).recent_private_conversations;
    expect(rpc).toEqual([
      { max_message_id: d, user_ids: [org.owner.user_id, org.member2.user_id].sort((x, y) => x - y) },
      { max_message_id: c, user_ids: [org.member2.user_id] },
    ]);
  });

  it("unread_msgs lists conversations as Zulip sorts them, whatever order their messages came in", async () => {
    const o = await m.createOrg();
    const me = o.member;
    const zeta = await m.createStream(o.owner, "zeta", [o.owner, me]);
    const alpha = await m.createStream(o.owner, "alpha", [o.owner, me]);
    expect(zeta).toBeLessThan(alpha);
    const inChannel = (to: string, topic: string) => m.send(o.owner, { type: "stream", to, topic, content: "x" });
    const dm = (from: Org["member"], to: Array<Org["member"]>) => m.send(from, { type: "direct", to: JSON.stringify(to.map((u) => u.user_id)), content: "x" });
    const m1 = await inChannel("alpha", "b");
    const m2 = await inChannel("zeta", "Zoo");
    const m3 = await dm(o.member2, [me]);
    const m4 = await inChannel("alpha", "A");
    const m5 = await inChannel("zeta", "apple");
    const m6 = await dm(o.owner, [me]);
    const m7 = await dm(o.member2, [me, o.owner]);
    const m8 = await inChannel("zeta", "ZOO");
    const m9 = await dm(o.admin, [me, o.moderator]);
    const m10 = await dm(o.member2, [me]);
    const key = (users: Array<Org["member"]>) => users.map((u) => u.user_id).sort((a, b) => a - b).join(",");
    const huddles = [
      { user_ids_string: key([o.owner, me, o.member2]), unread_message_ids: [m7] },
      { user_ids_string: key([o.admin, me, o.moderator]), unread_message_ids: [m9] },
    ].sort((a, b) => (a.user_ids_string < b.user_ids_string ? -1 : 1));
    const pms = [
      { other_user_id: o.member2.user_id, sender_id: o.member2.user_id, unread_message_ids: [m3, m10] },
      { other_user_id: o.owner.user_id, sender_id: o.owner.user_id, unread_message_ids: [m6] },
    ].sort((a, b) => a.other_user_id - b.other_user_id);
    const s = await state(me, { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) });
    expect(s.unread_msgs).toEqual({
      count: 10,
      pms,
      // By channel id, then lower-cased topic; a topic is one however it is cased, spelt as its oldest unread message spells it.
      streams: [
        { stream_id: zeta, topic: "apple", unread_message_ids: [m5] },
        { stream_id: zeta, topic: "Zoo", unread_message_ids: [m2, m8] },
        { stream_id: alpha, topic: "A", unread_message_ids: [m4] },
        { stream_id: alpha, topic: "b", unread_message_ids: [m1] },
      ],
      // By user_ids_string compared as a string.
      huddles,
      mentions: [],
      old_unreads_missing: false,
    });
  });

  it("unread_msgs covers the newest 50,000 unread messages outside channels the user left, and says when older ones are missing", async () => {
    const o = await m.createOrg();
    const me = o.member;
    await m.createStream(o.owner, "bulk", [o.owner, me]);
    await m.createStream(o.owner, "gone", [o.owner, me]);
    const first = await m.send(o.owner, { type: "stream", to: "bulk", topic: "load", content: "oldest" });
    // 49,999 more unread messages like the first, written directly: sending them would take minutes.
    await m.deps.pool.query(
      `WITH made AS (
         INSERT INTO messages (realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, sending_client, date_sent, search_tsv)
         SELECT realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, sending_client, date_sent, search_tsv
           FROM messages, generate_series(1, 49999) WHERE id = $1
         RETURNING id, realm_id)
       INSERT INTO usermessages (realm_id, user_id, message_id, flags) SELECT realm_id, $2, id, 0 FROM made`,
      [first, me.user_id],
    );
    // The newest unread message is in a channel the user then left: it takes no place in the 50,000.
    const left = await m.send(o.owner, { type: "stream", to: "gone", topic: "bye", content: "newest" });
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", me, { subscriptions: JSON.stringify(["gone"]) }));
    // (Leaving marks it read; rows from before that rule may still be unread.)
    await m.deps.pool.query("UPDATE usermessages SET flags = flags & ~1 WHERE user_id = $1 AND message_id = $2", [me.user_id, left]);
    const unread = async () => (await state(me, { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) })).unread_msgs;
    let u = await unread();
    expect(u.count).toBe(50000);
    expect(u.old_unreads_missing).toBe(true);
    expect(u.streams).toHaveLength(1);
    expect(u.streams[0].unread_message_ids).toHaveLength(50000);
    expect(u.streams[0].unread_message_ids[0]).toBe(first);
    // One more: the oldest is left out.
    const newest = await m.send(o.owner, { type: "stream", to: "bulk", topic: "load", content: "one more" });
    u = await unread();
    expect(u.count).toBe(50000);
    expect(u.streams[0].unread_message_ids[0]).toBeGreaterThan(first);
    expect(u.streams[0].unread_message_ids.at(-1)).toBe(newest);
    expect(u.old_unreads_missing).toBe(true);
  }, 60_000);

  it("without the notification_settings_null capability, null channel notification settings become the user's defaults", async () => {
    const who = (await m.createOrg()).member;
    const accounts = serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN);
    await m.createStream(who, "loud", [who]);
    const quiet = await m.createStream(who, "quiet", [who]);
    await m.createStream(who, "left", [who]);
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", who, { subscriptions: JSON.stringify(["left"]) }));
    await m.ok(await m.call("POST", "/users/me/subscriptions/properties", who, {
      subscription_data: JSON.stringify([{ stream_id: quiet, property: "desktop_notifications", value: true }]),
    }));
    await m.ok(await accounts("PATCH", "/settings", { as: who.as, params: { enable_stream_push_notifications: "true" } }));
    const settings = (s: any) => ({
      desktop: s.desktop_notifications, audible: s.audible_notifications, push: s.push_notifications, email: s.email_notifications, wildcard: s.wildcard_mentions_notify,
    });
    const types = JSON.stringify(["subscription"]);
    // Zulip's default capabilities: the user's defaults stand in (wildcard_mentions_notify stays null).
    for (const params of [{ fetch_event_types: types }, { fetch_event_types: types, client_capabilities: JSON.stringify({ notification_settings_null: false }) }]) {
      const s = await state(who, params);
      const byName = Object.fromEntries([...s.subscriptions, ...s.unsubscribed].map((x: any) => [x.name, settings(x)]));
      expect(byName).toEqual({
        loud: { desktop: false, audible: false, push: true, email: false, wildcard: null },
        quiet: { desktop: true, audible: false, push: true, email: false, wildcard: null },
        left: { desktop: false, audible: false, push: true, email: false, wildcard: null },
      });
    }
    // A client that takes null gets the stored values.
    const modern = await state(who, { fetch_event_types: types, client_capabilities: JSON.stringify({ notification_settings_null: true }) });
    expect(modern.subscriptions.map((x: any) => [x.name, settings(x)])).toEqual([
      ["loud", { desktop: null, audible: null, push: null, email: null, wildcard: null }],
      ["quiet", { desktop: true, audible: null, push: null, email: null, wildcard: null }],
    ]);
    expect(settings(modern.unsubscribed[0])).toEqual({ desktop: null, audible: null, push: null, email: null, wildcard: null });
  });

  it("starred_messages, drafts newest first, user_topics and legacy muted_topics", async () => {
    const id = await m.send(org.owner, { type: "stream", to: "general", topic: "star", content: "shine" });
    await m.ok(await m.call("POST", "/messages/flags", org.member, { messages: JSON.stringify([id]), op: "add", flag: "starred" }));
    await m.ok(await m.call("POST", "/drafts", org.member, { drafts: JSON.stringify([{ type: "", to: [], topic: "", content: "old", timestamp: 100 }, { type: "", to: [], topic: "", content: "new", timestamp: 200 }]) }));
    await m.ok(await m.call("POST", "/user_topics", org.member, { stream_id: general, topic: "noise", visibility_policy: 1 }));
    const s = await state(org.member, { fetch_event_types: JSON.stringify(["starred_messages", "drafts", "user_topic"]) });
    expect(s.starred_messages).toEqual([id]);
    expect(s.drafts.map((d: any) => d.content)).toEqual(["new", "old"]);
    expect(s.user_topics).toContainEqual(expect.objectContaining({ stream_id: general, topic_name: "noise", visibility_policy: 1 }));
    const legacy = await state(org.member, { fetch_event_types: JSON.stringify(["muted_topics"]) });
    expect(legacy.muted_topics).toEqual([["general", "noise", expect.any(Number)]]);
  });
});

describe("POST /user_topics", () => {
  it("sets and clears a policy with user_topic events", async () => {
    await m.outbox();
    await m.ok(await m.call("POST", "/user_topics", org.member, { stream_id: general, topic: "weekly", visibility_policy: 3 }));
    await m.ok(await m.call("POST", "/user_topics", org.member, { stream_id: general, topic: "weekly", visibility_policy: 0 }));
    const events = await m.clientEvents();
    expect(events.map((e) => e.event.type)).toEqual(["user_topic", "muted_topics", "user_topic", "muted_topics"]);
    expect(events.filter((e) => e.event.type === "user_topic").map((e) => e.event.visibility_policy)).toEqual([3, 0]);
    expect(events[0].event).toMatchObject({ type: "user_topic", stream_id: general, topic_name: "weekly" });
    expect(events.every((e) => e.users.length === 1 && e.users[0] === org.member.user_id)).toBe(true);
    const s = await state(org.member, { fetch_event_types: JSON.stringify(["user_topic"]) });
    expect(s.user_topics.find((t: any) => t.topic_name === "weekly")).toBeUndefined();
  });

  it("sends the legacy muted_topics list with each change: the muted topics only, with channel names", async () => {
    await m.ok(await m.call("POST", "/user_topics", org.member2, { stream_id: general, topic: "Quiet", visibility_policy: 1 }));
    await m.outbox();
    await m.ok(await m.call("POST", "/user_topics", org.member2, { stream_id: general, topic: "loud", visibility_policy: 3 }));
    await m.ok(await m.call("POST", "/user_topics", org.member2, { stream_id: general, topic: "hush", visibility_policy: 1 }));
    await m.ok(await m.call("POST", "/user_topics", org.member2, { stream_id: general, topic: "quiet", visibility_policy: 0 }));
    const lists = (await m.clientEvents()).filter((e) => e.event.type === "muted_topics").map((e) => e.event.muted_topics);
    expect(lists).toEqual([
      [["general", "Quiet", expect.any(Number)]],
      [["general", "Quiet", expect.any(Number)], ["general", "hush", expect.any(Number)]],
      [["general", "hush", expect.any(Number)]],
    ]);
    await m.ok(await m.call("POST", "/user_topics", org.member2, { stream_id: general, topic: "hush", visibility_policy: 0 }));
    await m.ok(await m.call("POST", "/user_topics", org.member2, { stream_id: general, topic: "loud", visibility_policy: 0 }));
  });

  it("a policy one holds can still be cleared after leaving the private channel, nothing more", async () => {
    const den = await m.createStream(org.owner, "den", [org.owner, org.member2], { invite_only: true });
    await m.ok(await m.call("POST", "/user_topics", org.member2, { stream_id: den, topic: "Hush", visibility_policy: 1 }));
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.member2, { subscriptions: JSON.stringify(["den"]) }));
    expectError(await m.call("POST", "/user_topics", org.member2, { stream_id: den, topic: "hush", visibility_policy: 3 }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("POST", "/user_topics", org.member2, { stream_id: den, topic: "other", visibility_policy: 0 }), 400, "BAD_REQUEST", "Invalid channel ID");
    await m.ok(await m.call("POST", "/user_topics", org.member2, { stream_id: den, topic: "hush", visibility_policy: 0 }));
    const s = await state(org.member2, { fetch_event_types: JSON.stringify(["user_topic"]) });
    expect(s.user_topics.filter((t: any) => t.stream_id === den)).toEqual([]);
  });

  it("refuses hidden channels and bad values", async () => {
    expectError(await m.call("POST", "/user_topics", org.member2, { stream_id: secret, topic: "t", visibility_policy: 1 }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await m.call("POST", "/user_topics", org.member, { stream_id: general, topic: "t", visibility_policy: 7 }), 400, "BAD_REQUEST");
    expectError(await m.call("POST", "/user_topics", org.member, { stream_id: general, visibility_policy: 1 }), 400, "REQUEST_VARIABLE_MISSING");
  });
});

describe("users replica", () => {
  it("follows accounts' user events through RabbitMQ, once per event", async () => {
    const log = createLogger("test", "silent");
    const vars = m.env.vars;
    const amqp = new AmqpClient(vars.AMQP_URL, vars.AMQP_EXCHANGE, vars.AMQP_QUEUE_PREFIX, log, 120000);
    await amqp.start();
    try {
      await consumeAccountsEvents(amqp, m.deps);
      const relay = new OutboxRelay({ pool: m.deps.pool, schema: "messaging", amqp, log });
      const user = {
        user_id: 900001,
        realm_id: org.realmId,
        email: "replica@example.test",
        delivery_email: "replica@example.test",
        full_name: "Rita Replica",
        role: 400,
        is_active: true,
        is_bot: false,
        bot_type: null,
        bot_owner_id: null,
        date_joined: new Date().toISOString(),
        timezone: "",
      };
      // Publish as accounts would (through an outbox and its relay); the same envelope twice.
      await m.outbox();
      await withTx(m.deps.pool, async (tx) => {
        await emitEvent(tx, { type: "accounts.user.created", realmId: org.realmId, payload: AccountsUserCreated.parse({ user }) });
      });
      const { rows } = await m.deps.pool.query("SELECT id, payload FROM outbox ORDER BY seq DESC LIMIT 1");
      await m.deps.pool.query("INSERT INTO outbox (id, type, version, realm_id, payload) VALUES (gen_random_uuid(), 'accounts.user.updated', 1, $1, $2)", [
        org.realmId,
        { user: { ...user, full_name: "Rita Renamed" } },
      ]);
      await relay.drain();
      await relay.drain();
      const deadline = Date.now() + 5000;
      let name = "";
      while (Date.now() < deadline) {
        const r = await m.deps.pool.query("SELECT full_name FROM users WHERE user_id = $1", [user.user_id]);
        name = r.rows[0]?.full_name ?? "";
        if (name === "Rita Renamed") break;
        await new Promise((res) => setTimeout(res, 50));
      }
      expect(name).toBe("Rita Renamed");
      const processed = await m.deps.pool.query("SELECT count(*)::int AS n FROM processed_events WHERE event_id = $1", [rows[0].id]);
      expect(processed.rows[0].n).toBe(1);
    } finally {
      await amqp.close();
    }
  });
});
