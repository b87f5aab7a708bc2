import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, eventsEnv, notice, poll, queueFor, user, type EventsEnv, type Instance } from "./support";

/**
 * Each queue filter and per-queue form, through real RabbitMQ and the real consumer: fake domain
 * events carrying client notices are published; queues are read with GET /events. Order is kept,
 * so "a queue skipped X" is shown by the next event it gets being a later marker.
 */

let ev: EventsEnv;
let inst: Instance;
let msgId = 100;

beforeAll(async () => {
  ev = await eventsEnv();
  inst = await ev.start();
});
afterAll(async () => {
  await ev.teardown();
});

const publish = (users: unknown[], event: Record<string, unknown>, extra: Record<string, unknown> = {}, realmId = 1) =>
  ev.publish("test.notice.sent", realmId, notice(event, users, extra));

function message(sender: { userId: number; email: string }, over: Record<string, unknown> = {}, markdown = "**hi**") {
  return {
    type: "message",
    message: {
      id: msgId++,
      sender_id: sender.userId,
      sender_email: sender.email,
      sender_full_name: "Sender",
      type: "stream",
      display_recipient: "Denmark",
      stream_id: 7,
      subject: "castle",
      content: "<p><strong>hi</strong></p>",
      content_type: "text/html",
      avatar_url: null,
      ...over,
    },
    markdown_content: markdown,
  };
}

const marker = (n: number) => ({ type: "marker", n });

/** Reads the queue (from the start) up to its marker `n`; returns what came before it. */
async function untilMarker(who: ReturnType<typeof user>, q: string, n: number) {
  const out: any[] = [];
  let last: number | undefined;
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const res = await poll(inst, who, q, last);
    expect(res.status).toBe(200);
    for (const e of res.body.events) {
      last = e.id;
      if (e.type === "marker" && e.n === n) return out;
      if (e.type !== "heartbeat") out.push(e);
    }
  }
  throw new Error(`marker ${n} never arrived; got ${JSON.stringify(out)}`);
}

describe("event_types", () => {
  it("delivers only the registered types, and muted_topics not alongside user_topic", async () => {
    const who = user();
    const all = await queueFor(inst, who);
    const some = await queueFor(inst, who, { event_types: ["custom", "marker", "muted_topics", "user_topic"] });
    await publish([who.userId], { type: "other" });
    await publish([who.userId], { type: "custom" });
    await publish([who.userId], { type: "muted_topics", muted_topics: [] });
    await publish([who.userId], marker(1));
    expect((await untilMarker(who, all, 1)).map((e) => e.type)).toEqual(["other", "custom", "muted_topics"]);
    expect((await untilMarker(who, some, 1)).map((e) => e.type)).toEqual(["custom"]);
  });
});

describe("narrow", () => {
  it("passes only message events that match every term; other events pass", async () => {
    const sender = user({ email: "Sender@Example.com" });
    const who = user();
    const byChannel = await queueFor(inst, who, { narrow: [["stream", "denmark"]] });
    const byTopic = await queueFor(inst, who, { narrow: [["channel", "Denmark"], ["topic", "CASTLE"]] });
    const bySender = await queueFor(inst, who, { narrow: [["sender", "sender@example.com"]] });
    const dms = await queueFor(inst, who, { narrow: [["is", "dm"]] });
    const starred = await queueFor(inst, who, { narrow: [{ operator: "is", operand: "starred" }] });
    const notDenmark = await queueFor(inst, who, { narrow: [{ operator: "channel", operand: "denmark", negated: true }] });

    const a = message(sender);
    const b = message(sender, { subject: "moat" });
    const c = message(user(), { display_recipient: "Norway" });
    const d = message(sender, { type: "private", display_recipient: [], subject: "" });
    await publish([{ id: who.userId, flags: [] }], a);
    await publish([{ id: who.userId, flags: ["starred"] }], b);
    await publish([who.userId], c);
    await publish([{ id: who.userId, flags: ["read"] }], d);
    await publish([who.userId], { type: "custom" });
    await publish([who.userId], marker(2));

    const ids = async (q: string) => (await untilMarker(who, q, 2)).map((e) => (e.type === "message" ? e.message.id : e.type));
    expect(await ids(byChannel)).toEqual([a.message.id, b.message.id, "custom"]);
    expect(await ids(byTopic)).toEqual([a.message.id, "custom"]);
    expect(await ids(bySender)).toEqual([a.message.id, b.message.id, d.message.id, "custom"]);
    expect(await ids(dms)).toEqual([d.message.id, "custom"]);
    expect(await ids(starred)).toEqual([b.message.id, "custom"]);
    expect(await ids(notDenmark)).toEqual([c.message.id, d.message.id, "custom"]);
  });
});

describe("all_public_streams", () => {
  it("adds public channel messages for queues that asked, with empty flags", async () => {
    const sender = user();
    const recipient = user();
    const watcher = user();
    const rq = await queueFor(inst, recipient);
    const wq = await queueFor(inst, watcher, { all_public_streams: true });
    const plain = await queueFor(inst, watcher);
    const outsider = user({ realmId: 2 });
    const otherRealm = await queueFor(inst, outsider, { all_public_streams: true });

    const pub = message(sender);
    const priv = message(sender, { display_recipient: "secret" });
    await publish([{ id: recipient.userId, flags: ["mentioned"] }], pub, { public_stream_id: 7 });
    await publish([{ id: recipient.userId, flags: [] }], priv); // a private channel: no public_stream_id
    await publish([recipient.userId, watcher.userId], marker(3));
    await publish([outsider.userId], marker(3), {}, 2);

    const r = await untilMarker(recipient, rq, 3);
    expect(r.map((e) => [e.message.id, e.flags])).toEqual([[pub.message.id, ["mentioned"]], [priv.message.id, []]]);
    const w = await untilMarker(watcher, wq, 3);
    expect(w.map((e) => [e.message.id, e.flags])).toEqual([[pub.message.id, []]]);
    expect(await untilMarker(watcher, plain, 3)).toEqual([]);
    expect(await untilMarker(outsider, otherRealm, 3)).toEqual([]);
  });

  it("an addressed user's all-public queue gets one copy, with the user's flags", async () => {
    const who = user();
    const q = await queueFor(inst, who, { all_public_streams: true });
    const m = message(user());
    await publish([{ id: who.userId, flags: ["read"] }], m, { public_stream_id: 7 });
    await publish([who.userId], marker(4));
    expect((await untilMarker(who, q, 4)).map((e) => [e.message.id, e.flags])).toEqual([[m.message.id, ["read"]]]);
  });

  it("narrowed queues of members see public channel messages; guests' do not", async () => {
    const member = user();
    const guest = user({ role: 600 });
    const mq = await queueFor(inst, member, { narrow: [["channel", "Denmark"]] });
    const gq = await queueFor(inst, guest, { narrow: [["channel", "Denmark"]] });
    const m = message(user());
    await publish([], m, { public_stream_id: 7 });
    await publish([member.userId, guest.userId], marker(5));
    expect((await untilMarker(member, mq, 5)).map((e) => e.message.id)).toEqual([m.message.id]);
    expect(await untilMarker(guest, gq, 5)).toEqual([]);
  });
});

describe("per-queue message form", () => {
  it("apply_markdown picks HTML or the Markdown; client_gravatar fills avatar URLs; markdown_content never leaks", async () => {
    const sender = user({ email: "Me@Example.com" });
    const who = user();
    const html = await queueFor(inst, who, { apply_markdown: true });
    const md = await queueFor(inst, who, { apply_markdown: false, client_gravatar: false });
    const m = message(sender);
    await publish([{ id: who.userId, flags: [] }], m);
    const [h] = (await collect(inst, who, html, 1)).events;
    const [k] = (await collect(inst, who, md, 1)).events;
    expect(h).toEqual({ id: 0, type: "message", flags: [], message: m.message });
    expect(k.message.content).toBe("**hi**");
    expect(k.message.content_type).toBe("text/x-markdown");
    const hash = createHash("md5").update("me@example.com").digest("hex");
    expect(k.message.avatar_url).toBe(`https://secure.gravatar.com/avatar/${hash}?d=identicon&version=1`);
    expect("markdown_content" in h || "markdown_content" in k).toBe(false);
  });

  it("echoes the local id only in the sender's named queue", async () => {
    const sender = user();
    const other = user();
    const named = await queueFor(inst, sender);
    const second = await queueFor(inst, sender);
    const theirs = await queueFor(inst, other);
    const m = message(sender);
    await publish([{ id: sender.userId, flags: ["read"] }, { id: other.userId, flags: [] }], m, {
      sender_queue: { queue_id: named, local_id: "17.01" },
    });
    const [n] = (await collect(inst, sender, named, 1)).events;
    const [s] = (await collect(inst, sender, second, 1)).events;
    const [t] = (await collect(inst, other, theirs, 1)).events;
    expect(n).toMatchObject({ local_message_id: "17.01", local_id: "17.01", flags: ["read"] });
    expect("local_message_id" in s || "local_id" in s).toBe(false);
    expect("local_message_id" in t || "local_id" in t).toBe(false);
  });
});

describe("client capabilities", () => {
  it("bulk_message_deletion: one event with message_ids, else one event per message", async () => {
    const who = user();
    const bulk = await queueFor(inst, who, { client_capabilities: { notification_settings_null: true, bulk_message_deletion: true } });
    const old = await queueFor(inst, who);
    await publish([who.userId], { type: "delete_message", message_type: "stream", stream_id: 7, topic: "castle", message_ids: [5, 6] });
    await publish([who.userId], { type: "delete_message", message_type: "private", message_id: 9 });
    await publish([who.userId], marker(6));
    expect(await untilMarker(who, bulk, 6)).toEqual([
      { id: 0, type: "delete_message", message_type: "stream", stream_id: 7, topic: "castle", message_ids: [5, 6] },
      { id: 1, type: "delete_message", message_type: "private", message_ids: [9] },
    ]);
    expect(await untilMarker(who, old, 6)).toEqual([
      { id: 0, type: "delete_message", message_type: "stream", stream_id: 7, topic: "castle", message_id: 5 },
      { id: 1, type: "delete_message", message_type: "stream", stream_id: 7, topic: "castle", message_id: 6 },
      { id: 2, type: "delete_message", message_type: "private", message_id: 9 },
    ]);
  });

  it("user_settings_object drops the legacy settings events; linkifiers and channel typing need theirs", async () => {
    const who = user();
    const modern = await queueFor(inst, who, {
      client_capabilities: { notification_settings_null: true, user_settings_object: true, linkifier_url_template: true, stream_typing_notifications: true },
    });
    const legacy = await queueFor(inst, who);
    await publish([who.userId], { type: "update_display_settings", user: who.email, setting_name: "dense_mode", setting: true });
    await publish([who.userId], { type: "update_global_notifications", user: who.email, notification_name: "enable_sounds", setting: false });
    await publish([who.userId], { type: "user_settings", op: "update", property: "dense_mode", value: true });
    await publish([who.userId], { type: "realm_linkifiers", realm_linkifiers: [] });
    await publish([who.userId], { type: "typing", op: "start", message_type: "stream", stream_id: 7, topic: "x", sender: { user_id: 1, email: "a" } });
    await publish([who.userId], { type: "typing", op: "start", message_type: "direct", recipients: [], sender: { user_id: 1, email: "a" } });
    await publish([who.userId], marker(7));
    const types = async (q: string) => (await untilMarker(who, q, 7)).map((e) => e.type + (e.stream_id ? ":stream" : ""));
    expect(await types(modern)).toEqual(["user_settings", "realm_linkifiers", "typing:stream", "typing"]);
    expect(await types(legacy)).toEqual(["update_display_settings", "update_global_notifications", "user_settings", "typing"]);
  });
});

describe("include_subscribers", () => {
  it("only queues registered with include_subscribers keep the subscriber lists of channel objects", async () => {
    const who = user();
    const register = async (include: boolean) => {
      const res = await inst.call("POST", "/register", { as: who, params: { fetch_event_types: [], include_subscribers: include } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.queue_id as string;
    };
    const withSubs = await register(true);
    const without = await register(false);
    const byDefault = await queueFor(inst, who); // GET /events registers with Zulip's default, false
    // ...and takes register's parameter (spec 4.4), not as an ignored one.
    const byPoll = await inst.call("GET", "/events", { as: who, params: { dont_block: true, include_subscribers: true } });
    expect(byPoll.body).toEqual({ result: "success", msg: "", events: [], queue_id: expect.any(String) });
    const pollWithSubs = byPoll.body.queue_id as string;
    const channel = { stream_id: 7, name: "Denmark", description: "", invite_only: false };
    const add = { type: "subscription", op: "add", subscriptions: [{ ...channel, color: "#76ce90", subscribers: [who.userId, 3] }] };
    const create = { type: "stream", op: "create", streams: [{ ...channel, subscribers: [3] }] };
    const peer = { type: "subscription", op: "peer_add", stream_ids: [7], user_ids: [3] };
    await publish([who.userId], add);
    await publish([who.userId], create);
    await publish([who.userId], peer);
    await publish([who.userId], marker(10));

    const strip = ({ subscribers: _s, ...rest }: Record<string, unknown>) => rest;
    expect(await untilMarker(who, withSubs, 10)).toEqual([{ id: 0, ...add }, { id: 1, ...create }, { id: 2, ...peer }]);
    expect(await untilMarker(who, pollWithSubs, 10)).toEqual([{ id: 0, ...add }, { id: 1, ...create }, { id: 2, ...peer }]);
    const stripped = [
      { id: 0, ...add, subscriptions: add.subscriptions.map(strip) },
      { id: 1, ...create, streams: create.streams.map(strip) },
      { id: 2, ...peer },
    ];
    expect(await untilMarker(who, without, 10)).toEqual(stripped);
    expect(await untilMarker(who, byDefault, 10)).toEqual(stripped);
    // Stored in the queue's metadata, so any instance shapes the copies the same way.
    expect(await ev.redis.hget(`${inst.config.REDIS_PREFIX}q:${withSubs}`, "include_subscribers")).toBe("1");
    expect(await ev.redis.hget(`${inst.config.REDIS_PREFIX}q:${without}`, "include_subscribers")).toBe("0");
  });
});

describe("delivery", () => {
  it("keeps organizations apart", async () => {
    const here = user();
    const there = user({ userId: here.userId, realmId: 2 });
    const q1 = await queueFor(inst, here);
    const q2 = await queueFor(inst, there);
    await publish([here.userId], { type: "custom", realm: 2 }, {}, 2);
    await publish([here.userId], marker(8), {}, 1);
    await publish([here.userId], marker(8), {}, 2);
    expect(await untilMarker(here, q1, 8)).toEqual([]);
    expect((await untilMarker(there, q2, 8)).map((e) => e.type)).toEqual(["custom"]);
  });

  it("delivers a redelivered envelope once, ignores events without a notice, and survives a bad notice", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    const first = await publish([who.userId], { type: "custom", n: 1 });
    await ev.publish(first.type, 1, first.payload, first.id);
    await ev.publish("test.no_client.happened", 1, { something: true });
    await ev.publish("test.bad_notice.happened", 1, { client: { event: { no_type: 1 }, users: "nobody" } });
    await publish([who.userId], marker(9));
    expect(await untilMarker(who, q, 9)).toEqual([{ id: 0, type: "custom", n: 1 }]);
  });
});
