import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import http2 from "node:http2";
import net from "node:net";
import { RestartEvent, ZULIP_MERGE_BASE, ZULIP_VERSION } from "@chat/contracts";
import { identityHeaders, ManualClock } from "@chat/platform";
import { parseMetrics, sampleSum } from "@chat/testkit";
import { notifyRestartIfUpgraded } from "../src/actions/maintenance";
import { scripts } from "../src/store/scripts";
import { eventsEnv, notice, poll, queueFor, user, type EventsEnv, type Instance } from "./support";

let ev: EventsEnv;
let inst: Instance;

beforeAll(async () => {
  ev = await eventsEnv();
  inst = await ev.start();
});
afterAll(async () => {
  await ev.teardown();
});

/** Through the real deliverer, without the broker: the write is done when this resolves. */
const direct = (realmId: number, users: number[], event: Record<string, unknown> & { type: string }) =>
  inst.app.events.deliverer.doDeliverNotice(randomUUID(), realmId, { event, users });

/** http_requests_total of one route and status, from the instance's /metrics. */
async function routeCount(instance: Instance, route: string, status: number): Promise<number> {
  const samples = parseMetrics(String((await instance.call("GET", "/../../metrics")).body));
  return sampleSum(samples, "http_requests_total", { method: "GET", route, status: String(status) }) || 0;
}

const send = (realmId: number, users: unknown[], event: Record<string, unknown> = { type: "custom", n: 1 }) =>
  ev.publish("test.thing.happened", realmId, notice(event, users));

describe("registering a queue", () => {
  it("GET /events without queue_id needs dont_block", async () => {
    const res = await inst.call("GET", "/events", { as: user() });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Missing 'queue_id' argument" });
  });

  it("GET /events with dont_block and no queue_id registers a queue", async () => {
    const res = await inst.call("GET", "/events", { as: user(), params: { dont_block: true } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "", events: [], queue_id: expect.any(String) });
  });

  it("POST /register without state types returns the queue keys", async () => {
    const res = await inst.call("POST", "/register", { as: user(), params: { fetch_event_types: [] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      result: "success",
      msg: "",
      queue_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      last_event_id: -1,
      zulip_version: expect.any(String),
      zulip_feature_level: 267,
      zulip_merge_base: expect.any(String),
      max_message_length: 10000,
      max_topic_length: 60,
      event_queue_longpoll_timeout_seconds: 90,
    });
  });

  it("rejects unsupported narrows and guests asking for all public channels, storing nothing", async () => {
    // KEYS answers in no particular order.
    const queueKeys = async () => (await ev.redis.keys(`${inst.config.REDIS_PREFIX}q:*`)).sort();
    const before = await queueKeys();
    const who = user();
    let res = await inst.call("POST", "/register", { as: who, params: { fetch_event_types: [], narrow: [["search", "x"]] } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: "BAD_REQUEST", msg: "Operator search not supported." });
    res = await inst.call("POST", "/register", { as: who, params: { fetch_event_types: [], narrow: [["is", "followed"]] } });
    expect(res.body).toMatchObject({ code: "BAD_REQUEST", msg: "Operand followed not supported." });
    res = await inst.call("POST", "/register", { as: user({ role: 600 }), params: { fetch_event_types: [], all_public_streams: true } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: "BAD_REQUEST", msg: "User not authorized for this query" });
    res = await inst.call("POST", "/register", { as: who, params: { event_types: "message" } });
    expect(res.body).toMatchObject({ code: "BAD_REQUEST", msg: "event_types is not valid JSON" });
    res = await inst.call("POST", "/register", { as: who, params: { fetch_event_types: [], queue_lifespan_secs: 1.5 } });
    expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "queue_lifespan_secs is not an integer" });
    expect(await queueKeys()).toEqual(before);
  });

  it("client_capabilities needs notification_settings_null, as Zulip's does; capabilities it does not define are ignored", async () => {
    const queueKeys = async () => (await ev.redis.keys(`${inst.config.REDIS_PREFIX}q:*`)).sort();
    const before = await queueKeys();
    const who = user();
    for (const caps of [{}, { bulk_message_deletion: true }]) {
      for (const res of [
        await inst.call("POST", "/register", { as: who, params: { fetch_event_types: [], client_capabilities: caps } }),
        await inst.call("GET", "/events", { as: who, params: { dont_block: true, client_capabilities: caps } }),
      ]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: 'client_capabilities["notification_settings_null"] field is missing' });
      }
    }
    expect(await queueKeys()).toEqual(before);
    // A capability from a later Zulip (or a typo) is not an error, whatever its value.
    const res = await inst.call("POST", "/register", {
      as: who,
      params: { fetch_event_types: [], client_capabilities: { notification_settings_null: true, bulk_message_deletion: true, some_future_capability: 1 } },
    });
    expect(res.status).toBe(200);
    const q = res.body.queue_id;
    await direct(1, [who.userId], { type: "delete_message", message_type: "private", message_ids: [7, 8] });
    expect((await poll(inst, who, q, -1, { dont_block: true })).body.events).toEqual([{ id: 0, type: "delete_message", message_type: "private", message_ids: [7, 8] }]);
  });

  it("lists unknown parameters as ignored", async () => {
    const res = await inst.call("POST", "/register", { as: user(), params: { fetch_event_types: [], slim_presence: true, shiny_new_flag: true } });
    expect(res.status).toBe(200);
    expect(res.body.ignored_parameters_unsupported).toEqual(["shiny_new_flag"]);
  });

  it("answers 503 and keeps no queue when a state service is unreachable", async () => {
    const who = user();
    const res = await inst.call("POST", "/register", { as: who, params: { fetch_event_types: ["message"] } });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ result: "error", code: "SERVICE_UNAVAILABLE" });
    expect(await ev.redis.smembers(`${inst.config.REDIS_PREFIX}u:1:${who.userId}`)).toEqual([]);
  });
});

describe("event ids and acknowledgement", () => {
  it("gives strictly increasing ids from 0 and drops acknowledged events", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    for (let n = 0; n < 3; n++) await direct(1, [who.userId], { type: "custom", n });

    // Not acknowledged: all of them, every time. Acknowledging 1 leaves only 2.
    let res = await poll(inst, who, q, undefined, { dont_block: true });
    expect(res.body.events).toEqual([{ id: 0, type: "custom", n: 0 }, { id: 1, type: "custom", n: 1 }, { id: 2, type: "custom", n: 2 }]);
    res = await poll(inst, who, q, -1);
    expect(res.body.events.map((e: any) => e.id)).toEqual([0, 1, 2]);
    res = await poll(inst, who, q, 1, { dont_block: true });
    expect(res.body).toEqual({ result: "success", msg: "", events: [{ id: 2, type: "custom", n: 2 }], queue_id: q });
    res = await poll(inst, who, q, 2, { dont_block: true });
    expect(res.body.events).toEqual([]);
  });

  it("refuses an acknowledgement of pruned events without changing the queue", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    for (let n = 0; n < 3; n++) await direct(1, [who.userId], { type: "custom", n });
    await poll(inst, who, q, 1, { dont_block: true });

    const res = await poll(inst, who, q, 0, { dont_block: true });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "An event newer than 0 has already been pruned!" });
    expect((await poll(inst, who, q, 1, { dont_block: true })).body.events.map((e: any) => e.id)).toEqual([2]);
  });

  it("an id past the newest event: the queued events are dropped all the same, then the poll is refused (as Zulip)", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    for (let n = 0; n < 3; n++) await direct(1, [who.userId], { type: "custom", n });
    await poll(inst, who, q, 1, { dont_block: true });

    let res = await poll(inst, who, q, 7, { dont_block: true });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Event 7 was not in this queue" });
    // Event 2 went: acknowledging 1 again is acknowledging a pruned event.
    res = await poll(inst, who, q, 1, { dont_block: true });
    expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "An event newer than 1 has already been pruned!" });
    expect((await poll(inst, who, q, 2, { dont_block: true })).body.events).toEqual([]);

    // Again with a blocking poll: the new event goes, and the poll is refused at once.
    await direct(1, [who.userId], { type: "custom", n: 3 });
    res = await poll(inst, who, q, 9);
    expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Event 9 was not in this queue" });
    expect((await poll(inst, who, q, 3, { dont_block: true })).body.events).toEqual([]);
    // The same id once more: nothing left to drop, the same refusal; later events still come.
    expect((await poll(inst, who, q, 9, { dont_block: true })).body).toMatchObject({ msg: "Event 9 was not in this queue" });
    await direct(1, [who.userId], { type: "custom", n: 4 });
    expect((await poll(inst, who, q, 3, { dont_block: true })).body.events).toEqual([{ id: 4, type: "custom", n: 4 }]);
  });

  it("accepts -1 on a fresh queue and no last_event_id at all", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    expect((await poll(inst, who, q, -1, { dont_block: true })).body.events).toEqual([]);
    expect((await poll(inst, who, q, undefined, { dont_block: true })).status).toBe(200);
  });

  it("on a queue that never had an event, acknowledging one is refused as Zulip refuses it", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    expect((await poll(inst, who, q, 5, { dont_block: true })).body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Event 5 was not in this queue" });
    expect((await poll(inst, who, q, -7, { dont_block: true })).body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "An event newer than -7 has already been pruned!" });
    expect((await poll(inst, who, q, -1, { dont_block: true })).body.events).toEqual([]);
  });

  it("answers BAD_EVENT_QUEUE_ID for unknown queues and other users' queues", async () => {
    const owner = user();
    const q = await queueFor(inst, owner);
    for (const who of [user(), user({ userId: owner.userId, realmId: 2 })]) {
      const res = await poll(inst, who, q, -1, { dont_block: true });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", code: "BAD_EVENT_QUEUE_ID", msg: `Bad event queue ID: ${q}`, queue_id: q });
      const del = await inst.call("DELETE", "/events", { as: who, params: { queue_id: q } });
      expect(del.body).toMatchObject({ code: "BAD_EVENT_QUEUE_ID", queue_id: q });
    }
    const res = await poll(inst, owner, "no-such-queue", -1);
    expect(res.body).toMatchObject({ code: "BAD_EVENT_QUEUE_ID", queue_id: "no-such-queue" });
    // A blocking poll on an id outside printable ASCII takes fastify's route, with the same answer.
    const odd = await poll(inst, owner, "queue-é☃", -1);
    expect(odd.body).toMatchObject({ code: "BAD_EVENT_QUEUE_ID", queue_id: "queue-é☃" });
    // The owner's queue is untouched.
    expect((await poll(inst, owner, q, -1, { dont_block: true })).status).toBe(200);
  });
});

describe("long polling", () => {
  it("returns as soon as an event arrives", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    const started = Date.now();
    const pending = poll(inst, who, q, -1);
    await new Promise((r) => setTimeout(r, 100));
    await send(1, [who.userId], { type: "custom", n: 9 });
    const res = await pending;
    expect(res.body).toEqual({ result: "success", msg: "", events: [{ id: 0, type: "custom", n: 9 }], queue_id: q });
    expect(Date.now() - started).toBeLessThan(4000); // well before the 5 s heartbeat
  });

  it("sends a heartbeat (an event to acknowledge) after the interval", async () => {
    const quick = await ev.start({ env: { EVENTS_HEARTBEAT_SECONDS: "1" }, consume: false });
    const who = user();
    const q = await queueFor(quick, who);
    const started = Date.now();
    const res = await poll(quick, who, q, -1);
    const waited = Date.now() - started;
    expect(res.body.events).toEqual([{ id: 0, type: "heartbeat" }]);
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(4000);
    const next = await poll(quick, who, q, 0, { dont_block: true });
    expect(next.body.events).toEqual([]);
    await quick.close();
  });

  it("holds a poll on a queue whose lifespan is shorter than the jittered heartbeat", async () => {
    const quick = await ev.start({ env: { EVENTS_HEARTBEAT_SECONDS: "1", EVENTS_HEARTBEAT_JITTER_SECONDS: "1" }, consume: false });
    const who = user();
    const q = await queueFor(quick, who, { queue_lifespan_secs: 1 });
    const res = await poll(quick, who, q, -1);
    expect(res.status).toBe(200);
    expect(res.body.events).toEqual([{ id: 0, type: "heartbeat" }]);
    await quick.close();
  });

  it("answers a held poll with the request id it came with, and counts it in the metrics", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    const pending = inst.call("GET", "/events", { as: who, params: { queue_id: q, last_event_id: -1 }, headers: { "x-request-id": "held-poll-1" } });
    await new Promise((r) => setTimeout(r, 100));
    const before = await routeCount(inst, "/api/v1/events", 200);
    await direct(1, [who.userId], { type: "custom", n: 3 });
    const res = await pending;
    expect(res.headers["x-request-id"]).toBe("held-poll-1");
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.body).toEqual({ result: "success", msg: "", events: [{ id: 0, type: "custom", n: 3 }], queue_id: q });
    expect(await routeCount(inst, "/api/v1/events", 200)).toBe(before + 1);
  });

  it("a blocking poll with a parameter it does not know waits too, and lists the parameter as ignored", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    const pending = poll(inst, who, q, -1, { shiny: "yes" });
    await new Promise((r) => setTimeout(r, 100));
    await direct(1, [who.userId], { type: "custom", n: 4 });
    expect((await pending).body).toEqual({
      result: "success",
      msg: "",
      events: [{ id: 0, type: "custom", n: 4 }],
      queue_id: q,
      ignored_parameters_unsupported: ["shiny"],
    });
  });

  it("in-process calls (fastify's own GET /events route) wait and answer alike", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    const pending = inst.inject("GET", "/events", { as: who, params: { queue_id: q, last_event_id: -1 } });
    await new Promise((r) => setTimeout(r, 100));
    await direct(1, [who.userId], { type: "custom", n: 5 });
    expect((await pending).body).toEqual({ result: "success", msg: "", events: [{ id: 0, type: "custom", n: 5 }], queue_id: q });
  });

  it("a client hanging up ends its poll: nothing is held for it and no heartbeat is queued", async () => {
    const quick = await ev.start({ env: { EVENTS_HEARTBEAT_SECONDS: "1" }, consume: false });
    const who = user();
    const q = await queueFor(quick, who);
    const hangUp = new AbortController();
    const pending = fetch(`${quick.url}/api/v1/events?queue_id=${q}&last_event_id=-1`, {
      headers: identityHeaders(who, quick.config.INTERNAL_TOKEN),
      signal: hangUp.signal,
    }).catch((err: Error) => err.name);
    await new Promise((r) => setTimeout(r, 200));
    expect(quick.app.events.hub.held).toBe(1);
    hangUp.abort();
    expect(await pending).toBe("AbortError");
    // Past the heartbeat: a poll still waiting would have queued one.
    await new Promise((r) => setTimeout(r, 1500));
    expect(quick.app.events.hub.held).toBe(0);
    expect((await poll(quick, who, q, -1, { dont_block: true })).body.events).toEqual([]);
    await quick.close();
  });

  it("/metrics shows the polls this instance holds and the deployment's queues", async () => {
    const gauge = async (name: string) => sampleSum(parseMetrics(String((await inst.call("GET", "/../../metrics")).body)), name, {});
    const queues = Number(await ev.redis.zcard(`${inst.config.REDIS_PREFIX}expiry`));
    expect(await gauge("events_queues")).toBe(queues);
    const who = user();
    const q = await queueFor(inst, who);
    expect(await gauge("events_queues")).toBe(queues + 1);
    const before = await gauge("events_held_polls");
    const pending = poll(inst, who, q, -1);
    await new Promise((r) => setTimeout(r, 150));
    expect(await gauge("events_held_polls")).toBe(before + 1);
    await direct(1, [who.userId], { type: "custom", n: 6 });
    await pending;
    expect(await gauge("events_held_polls")).toBe(before);
  });

  it("/metrics shows how long events took from their service to the clients' queues", async () => {
    // By the instance's clock, against the time the event was made in its service.
    const made = new Date("2026-11-27T12:00:00.000Z");
    const clock = new ManualClock(new Date(made.getTime() + 2000));
    const timed = await ev.start({ clock, consume: false });
    const bucket = async (le: string) => sampleSum(parseMetrics(String((await timed.call("GET", "/../../metrics")).body)), "events_delivery_lag_seconds_bucket", { le }) || 0;
    const [under1, under2] = [await bucket("1"), await bucket("2.5")];
    const who = user();
    const q = await queueFor(timed, who);
    const envelope = { id: randomUUID(), type: "test.thing.happened", version: 1, occurred_at: made.toISOString(), realm_id: 1, payload: notice({ type: "custom", n: 9 }, [who.userId]) };
    expect(await timed.app.events.deliverer.deliverEnvelope(envelope)).toBe(1);
    // Two seconds late: counted between 1 and 2.5 s; a redelivery writes nothing and counts nothing.
    expect((await bucket("2.5")) - under2 - ((await bucket("1")) - under1)).toBe(1);
    expect(await timed.app.events.deliverer.deliverEnvelope(envelope)).toBe(0);
    expect((await bucket("2.5")) - under2 - ((await bucket("1")) - under1)).toBe(1);
    // The consumer's batches (a relay's run of envelopes) count each envelope.
    const more = [10, 11].map((n) => ({ ...envelope, id: randomUUID(), payload: notice({ type: "custom", n }, [who.userId]) }));
    await timed.app.events.deliverer.deliverEnvelopes(more);
    expect((await bucket("2.5")) - under2 - ((await bucket("1")) - under1)).toBe(3);
    const got = (await poll(timed, who, q, -1, { dont_block: true })).body.events;
    expect(got.map((e: { n: number }) => e.n)).toEqual([9, 10, 11]);
    await timed.close();
  });

  it("a second poll on the queue releases the first", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    const first = poll(inst, who, q, -1);
    await new Promise((r) => setTimeout(r, 150));
    const second = poll(inst, who, q, -1);
    const res = await first;
    expect(res.status).toBe(200);
    expect(res.body.events).toEqual([]);
    await send(1, [who.userId], { type: "custom", n: 1 });
    expect((await second).body.events).toEqual([{ id: 0, type: "custom", n: 1 }]);
  });

  it("DELETE /events releases a waiting poll and removes the queue", async () => {
    const who = user();
    const q = await queueFor(inst, who);
    const waiting = poll(inst, who, q, -1);
    await new Promise((r) => setTimeout(r, 150));
    const del = await inst.call("DELETE", "/events", { as: who, params: { queue_id: q } });
    expect(del.body).toEqual({ result: "success", msg: "" });
    const res = await waiting;
    expect(res.body).toEqual({ result: "success", msg: "", events: [], queue_id: q });
    expect((await poll(inst, who, q, -1)).body.code).toBe("BAD_EVENT_QUEUE_ID");
    expect((await inst.call("DELETE", "/events", { as: who, params: { queue_id: q } })).body.code).toBe("BAD_EVENT_QUEUE_ID");
    expect(await ev.redis.smembers(`${inst.config.REDIS_PREFIX}u:1:${who.userId}`)).toEqual([]);
  });

  it("one event to more waiting polls than one batched read takes: each poll gets its own queue's events", async () => {
    // 600 polls woken together are read in two script calls; queue i has acknowledged i % 3
    // earlier events, so a reply handed to the wrong poll would carry the wrong id.
    const who = Array.from({ length: 600 }, () => user());
    const queues = await Promise.all(who.map((u) => queueFor(inst, u)));
    for (const k of [1, 2]) {
      const group = who.filter((_, i) => i % 3 >= k).map((u) => u.userId);
      await direct(1, group, { type: "custom", early: k });
    }
    const polls = who.map((u, i) => poll(inst, u, queues[i], (i % 3) - 1));
    await new Promise((r) => setTimeout(r, 500));
    await direct(1, who.map((u) => u.userId), { type: "custom", all: true });
    const replies = await Promise.all(polls);
    replies.forEach((res, i) => {
      expect(res.body).toEqual({ result: "success", msg: "", events: [{ id: i % 3, type: "custom", all: true }], queue_id: queues[i] });
    });
  });

  it("a poll woken by an instance from before carried events (a bare \"e\") reads its queue", async () => {
    // During a rolling upgrade, older instances' fan-outs push the event and publish "e" only.
    const who = user();
    const q = await queueFor(inst, who);
    const waiting = poll(inst, who, q, -1);
    await new Promise((r) => setTimeout(r, 150));
    const P = inst.config.REDIS_PREFIX;
    const id = (await ev.redis.hincrby(`${P}q:${q}`, "next_id", 1)) - 1;
    await ev.redis.zadd(`${P}qe:${q}`, id, JSON.stringify({ id, type: "custom", old: true }));
    await ev.redis.publish(`${P}wake:${q}`, "e");
    expect((await waiting).body).toEqual({ result: "success", msg: "", events: [{ id: 0, type: "custom", old: true }], queue_id: q });
  });

  it("DELETE /events needs queue_id", async () => {
    const res = await inst.call("DELETE", "/events", { as: user() });
    expect(res.body).toMatchObject({ code: "REQUEST_VARIABLE_MISSING", var_name: "queue_id" });
  });
});

describe("a queue's polls at most once per EVENTS_POLL_MIN_INTERVAL_MS", () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const deliver = (at: Instance, userId: number, n: number) =>
    at.app.events.deliverer.doDeliverNotice(randomUUID(), 1, { event: { type: "custom", n }, users: [userId] });

  /** An instance pacing at 1 s and a queue whose first poll was just answered (event 0): the next poll waits. */
  const justAnswered = async () => {
    const paced = await ev.start({ env: { EVENTS_POLL_MIN_INTERVAL_MS: "1000" }, consume: false });
    const who = user();
    const q = await queueFor(paced, who);
    const first = poll(paced, who, q, -1);
    await sleep(100);
    await deliver(paced, who.userId, 1);
    await first;
    return { paced, who, q };
  };

  it("a poll sooner than the interval is answered once it has passed, with everything that came meanwhile, on any instance", async () => {
    const env = { EVENTS_POLL_MIN_INTERVAL_MS: "600" };
    const [a, b] = [await ev.start({ env, consume: false }), await ev.start({ env, consume: false })];
    const who = user();
    const q = await queueFor(a, who);
    const firstSent = Date.now();
    const first = poll(a, who, q, -1);
    await sleep(100);
    await deliver(a, who.userId, 1);
    expect((await first).body.events).toEqual([{ id: 0, type: "custom", n: 1 }]);
    // The client polls again at once, through another instance: Redis keeps the queue's pace.
    const second = poll(b, who, q, 0);
    await sleep(100);
    await deliver(a, who.userId, 2);
    await sleep(100);
    await deliver(a, who.userId, 3);
    const res = await second;
    // Unpaced, the first of the two would have answered the poll alone.
    expect(res.body).toEqual({ result: "success", msg: "", events: [{ id: 1, type: "custom", n: 2 }, { id: 2, type: "custom", n: 3 }], queue_id: q });
    expect(Date.now() - firstSent).toBeGreaterThanOrEqual(550);
    await a.close();
    await b.close();
  });

  it("a poll that waited longer than the interval answers its first event at once; dont_block polls are never paced, and a paced poll that cannot be answered gets its error", async () => {
    const paced = await ev.start({ env: { EVENTS_POLL_MIN_INTERVAL_MS: "1000" }, consume: false });
    const who = user();
    const q = await queueFor(paced, who);
    const first = poll(paced, who, q, -1);
    await sleep(1100);
    let started = Date.now();
    await deliver(paced, who.userId, 1);
    expect((await first).body.events).toEqual([{ id: 0, type: "custom", n: 1 }]);
    expect(Date.now() - started).toBeLessThan(800);
    // A blocking poll that finds events answers with them, and starts the queue's interval...
    await deliver(paced, who.userId, 2);
    expect((await poll(paced, who, q, 0)).body.events).toEqual([{ id: 1, type: "custom", n: 2 }]);
    // ...within which a poll that does not wait answers at once...
    started = Date.now();
    expect((await poll(paced, who, q, 1, { dont_block: true })).body.events).toEqual([]);
    expect(Date.now() - started).toBeLessThan(800);
    // ...and a blocking poll that cannot be answered gets its error, once the interval is over
    // (this instance fetched the queue just now, so it waits before asking Redis).
    expect((await poll(paced, who, q, 7)).body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Event 7 was not in this queue" });
    await paced.close();
  });

  it("a poll sooner than the interval, on the instance that just fetched its queue, waits there and asks Redis once", async () => {
    const { paced, who, q } = await justAnswered();
    let fetches = 0;
    const stopMonitor = await monitorRedis(ev.redis, (line) => {
      if (line.toLowerCase().includes(`"evalsha" "${scripts.fetch.sha}"`) && line.includes(`"${q}"`)) fetches++;
    });
    const second = poll(paced, who, q, 0);
    await sleep(200);
    await deliver(paced, who.userId, 2);
    expect((await second).body.events).toEqual([{ id: 1, type: "custom", n: 2 }]);
    await sleep(100);
    stopMonitor();
    // Asking Redis at once would have been two fetches: one told to wait, one after the wait.
    expect(fetches).toBe(1);
    await paced.close();
  });

  it("shutting down answers a poll that waits out the interval, as it answers held polls", async () => {
    const { paced, who, q } = await justAnswered();
    const pausing = poll(paced, who, q, 0);
    await sleep(200);
    await paced.close();
    const res = await pausing;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "", events: [{ id: 1, type: "heartbeat" }], queue_id: q });
  });

  it("a client hanging up while its poll waits out the interval ends it at once, acknowledging nothing", async () => {
    const { paced, who, q } = await justAnswered();
    const hangUp = new AbortController();
    const pending = fetch(`${paced.url}/api/v1/events?queue_id=${q}&last_event_id=0`, {
      headers: identityHeaders(who, paced.config.INTERNAL_TOKEN),
      signal: hangUp.signal,
    }).catch((err: Error) => err.name);
    await sleep(200);
    expect(paced.app.events.hub.held).toBe(1);
    hangUp.abort();
    expect(await pending).toBe("AbortError");
    await sleep(200);
    expect(paced.app.events.hub.held).toBe(0);
    // Past the interval: the abandoned poll's fetch never ran, so event 0 is still unacknowledged.
    await sleep(1500);
    expect(paced.app.events.hub.held).toBe(0);
    expect((await poll(paced, who, q, undefined, { dont_block: true })).body.events).toEqual([{ id: 0, type: "custom", n: 1 }]);
    await paced.close();
  });
});

/** A GET over an HTTP/2 connection, as the gateway sends held polls: status, headers and body text. */
function h2Get(session: http2.ClientHttp2Session, path: string, headers: Record<string, string>) {
  const stream = session.request({ ":method": "GET", ":path": `/api/v1${path}`, ...headers }, { endStream: true });
  const answer = new Promise<{ status: number; headers: http2.IncomingHttpHeaders; text: string }>((resolve, reject) => {
    let head: http2.IncomingHttpHeaders = {};
    let text = "";
    stream.on("response", (h) => (head = h));
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => (text += chunk));
    stream.on("end", () => resolve({ status: Number(head[":status"]), headers: head, text }));
    stream.on("error", reject);
  });
  return { stream, answer };
}

const h2Poll = (session: http2.ClientHttp2Session, instance: Instance, who: ReturnType<typeof user>, q: string, extra = "") =>
  h2Get(session, `/events?queue_id=${q}&last_event_id=-1${extra}`, identityHeaders(who, instance.config.INTERNAL_TOKEN));

describe("held polls as HTTP/2 streams (how the gateway sends them)", () => {
  it("many polls share one connection to the service's port; each gets its own queue's event as it arrives", async () => {
    const session = http2.connect(inst.url);
    const who = Array.from({ length: 20 }, () => user());
    const queues = await Promise.all(who.map((u) => queueFor(inst, u)));
    const before = inst.app.events.hub.held;
    const before200 = await routeCount(inst, "/api/v1/events", 200);
    const polls = who.map((u, i) => h2Get(session, `/events?queue_id=${queues[i]}&last_event_id=-1`, { ...identityHeaders(u, inst.config.INTERNAL_TOKEN), "x-request-id": `h2-${i}` }));
    await new Promise((r) => setTimeout(r, 200));
    expect(inst.app.events.hub.held).toBe(before + 20);
    for (const [i, u] of who.entries()) await direct(1, [u.userId], { type: "custom", n: i });
    const answers = await Promise.all(polls.map((p) => p.answer));
    answers.forEach((a, i) => {
      expect(a.status).toBe(200);
      expect(a.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(a.headers["x-request-id"]).toBe(`h2-${i}`);
      expect(JSON.parse(a.text)).toEqual({ result: "success", msg: "", events: [{ id: 0, type: "custom", n: i }], queue_id: queues[i] });
    });
    expect(await routeCount(inst, "/api/v1/events", 200)).toBe(before200 + 20);
    session.close();
  });

  it("a stream it does not take whole gets 421 and no body (the gateway repeats it over HTTP/1.1); nothing is held", async () => {
    const session = http2.connect(inst.url);
    const who = user();
    const q = await queueFor(inst, who);
    const before = inst.app.events.hub.held;
    const token = inst.config.INTERNAL_TOKEN;
    const refused = [
      h2Poll(session, inst, who, q, "&dont_block=true"),
      h2Poll(session, inst, who, q, "&shiny=yes"),
      h2Get(session, `/events?queue_id=${q}&last_event_id=-1`, identityHeaders(who, "wrong-token")),
      h2Get(session, `/events?last_event_id=-1`, identityHeaders(who, token)),
      h2Get(session, `/events?queue_id=${q}&last_event_id=banana`, identityHeaders(who, token)),
      h2Get(session, `/register`, identityHeaders(who, token)),
    ];
    for (const r of refused) expect(await r.answer).toMatchObject({ status: 421, text: "" });
    expect(inst.app.events.hub.held).toBe(before);
    // The queue saw nothing: the same poll over HTTP/1.1 is answered as usual.
    expect((await poll(inst, who, q, -1, { dont_block: true })).body).toEqual({ result: "success", msg: "", events: [], queue_id: q });
    session.close();
  });

  it("an error of a taken poll is the Zulip error, over the stream", async () => {
    const session = http2.connect(inst.url);
    const { answer } = h2Poll(session, inst, user(), "no-such-queue");
    const a = await answer;
    expect(a.status).toBe(400);
    expect(JSON.parse(a.text)).toMatchObject({ result: "error", code: "BAD_EVENT_QUEUE_ID", queue_id: "no-such-queue" });
    session.close();
  });

  it("a cancelled stream ends its poll: nothing is held for it and no heartbeat is queued", async () => {
    const quick = await ev.start({ env: { EVENTS_HEARTBEAT_SECONDS: "1" }, consume: false });
    const session = http2.connect(quick.url);
    const who = user();
    const q = await queueFor(quick, who);
    const { stream, answer } = h2Poll(session, quick, who, q);
    answer.catch(() => {});
    await new Promise((r) => setTimeout(r, 200));
    expect(quick.app.events.hub.held).toBe(1);
    stream.close(http2.constants.NGHTTP2_CANCEL);
    await new Promise((r) => setTimeout(r, 1500));
    expect(quick.app.events.hub.held).toBe(0);
    expect((await poll(quick, who, q, -1, { dont_block: true })).body.events).toEqual([]);
    session.close();
    await quick.close();
  });

  it("shutting down answers held streams with a heartbeat, then tells the connection to go away", async () => {
    const doomed = await ev.start({ consume: false });
    const session = http2.connect(doomed.url);
    const goaway = new Promise<void>((resolve) => session.once("goaway", () => resolve()));
    const who = user();
    const q = await queueFor(doomed, who);
    const { answer } = h2Poll(session, doomed, who, q);
    await new Promise((r) => setTimeout(r, 200));
    const closing = doomed.close();
    const a = await answer;
    expect(JSON.parse(a.text)).toEqual({ result: "success", msg: "", events: [{ id: 0, type: "heartbeat" }], queue_id: q });
    await goaway;
    await closing;
    expect(session.closed || session.destroyed).toBe(true);
  });
});

describe("expiry", () => {
  /** An instance with its own Redis prefix (the sweeper sees only the test's queues) and clock. */
  async function sweptInstance(heartbeatSeconds: number) {
    const own = await eventsEnv();
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const local = await own.start({ clock, consume: false, env: { EVENTS_HEARTBEAT_SECONDS: String(heartbeatSeconds) } });
    return { own, clock, local };
  }

  it("removes queues idle past their lifespan, not those with a waiting poll", async () => {
    const { own, clock, local } = await sweptInstance(1);
    const idle = user();
    const busy = user();
    const long = user();
    const qIdle = await queueFor(local, idle);
    const qBusy = await queueFor(local, busy);
    const qLong = await queueFor(local, long, { queue_lifespan_secs: 3600 });
    const qCapped = await queueFor(local, long, { queue_lifespan_secs: 30 * 24 * 3600 });

    clock.advance(599_000);
    expect(await local.app.events.sweeper.sweepOnce()).toEqual([]);
    const waiting = poll(local, busy, qBusy, -1); // refreshes its last connection
    await new Promise((r) => setTimeout(r, 100));
    clock.advance(2_000);
    expect(await local.app.events.sweeper.sweepOnce()).toEqual([qIdle]);
    expect((await poll(local, idle, qIdle, -1, { dont_block: true })).body).toMatchObject({ code: "BAD_EVENT_QUEUE_ID", queue_id: qIdle });

    // The poll ends with its heartbeat; ten idle minutes later the queue goes too.
    // (It waited from 599 s, so it is due at 1199 s.)
    await waiting;
    clock.advance(597_000); // 1198 s
    expect(await local.app.events.sweeper.sweepOnce()).toEqual([]);
    clock.advance(2_000); // 1200 s
    expect(await local.app.events.sweeper.sweepOnce()).toEqual([qBusy]);

    clock.advance(2400_000); // 3600 s
    expect(await local.app.events.sweeper.sweepOnce()).toEqual([qLong]);
    // Lifespans are capped at 7 days.
    clock.advance(7 * 24 * 3600_000 - 3600_000 - 1000);
    expect(await local.app.events.sweeper.sweepOnce()).toEqual([]);
    clock.advance(1000);
    expect(await local.app.events.sweeper.sweepOnce()).toEqual([qCapped]);
    expect(await ev.redis.exists(`${local.config.REDIS_PREFIX}q:${qCapped}`, `${local.config.REDIS_PREFIX}qe:${qCapped}`)).toBe(0);
    expect(await ev.redis.smembers(`${local.config.REDIS_PREFIX}u:1:${long.userId}`)).toEqual([]);
    await own.teardown();
  });

  it("a negative lifespan is accepted, as Zulip accepts it: the queue works until the next sweep, which removes it unless a poll waits", async () => {
    const { own, clock, local } = await sweptInstance(1);
    const who = user();
    for (const params of [{ queue_lifespan_secs: -5 }, { lifespan_secs: -1 }]) {
      const res = await local.call("POST", "/register", { as: who, params: { fetch_event_types: [], ...params } });
      expect(res.status).toBe(200);
      expect(res.body.last_event_id).toBe(-1);
    }
    const byPoll = await local.call("GET", "/events", { as: who, params: { dont_block: true, lifespan_secs: -5 } });
    expect(byPoll.status).toBe(200);
    const queues = await ev.redis.smembers(`${local.config.REDIS_PREFIX}u:1:${who.userId}`);
    expect(queues).toHaveLength(3);
    const [kept, ...gone] = queues;
    // Until then a queue answers; a waiting poll keeps it through a sweep.
    await local.app.events.deliverer.doDeliverNotice(randomUUID(), 1, { event: { type: "custom", n: 1 }, users: [who.userId] });
    expect((await poll(local, who, kept, -1, { dont_block: true })).body.events).toEqual([{ id: 0, type: "custom", n: 1 }]);
    const waiting = poll(local, who, kept, 0);
    await new Promise((r) => setTimeout(r, 150));
    expect((await local.app.events.sweeper.sweepOnce()).sort()).toEqual([...gone].sort());
    for (const q of gone) expect((await poll(local, who, q, -1, { dont_block: true })).body).toMatchObject({ code: "BAD_EVENT_QUEUE_ID", queue_id: q });
    // An event ends the wait; the next sweep removes it.
    await local.app.events.deliverer.doDeliverNotice(randomUUID(), 1, { event: { type: "custom", n: 2 }, users: [who.userId] });
    expect((await waiting).body.events).toEqual([{ id: 1, type: "custom", n: 2 }]);
    clock.advance(1);
    expect(await local.app.events.sweeper.sweepOnce()).toEqual([kept]);
    expect(await ev.redis.smembers(`${local.config.REDIS_PREFIX}u:1:${who.userId}`)).toEqual([]);
    await own.teardown();
  });

  it("a poll answered with a fan-out's events ends its wait: the queue's idle clock runs from its last poll", async () => {
    const { own, clock, local } = await sweptInstance(30);
    const who = user();
    const q = await queueFor(local, who, { queue_lifespan_secs: 1 });
    const waiting = poll(local, who, q, -1);
    await new Promise((r) => setTimeout(r, 150));
    await local.app.events.deliverer.doDeliverNotice(randomUUID(), 1, { event: { type: "custom", n: 1 }, users: [who.userId] });
    expect((await waiting).body.events).toEqual([{ id: 0, type: "custom", n: 1 }]);

    // Still waiting, it would be kept until its heartbeat (30 s) had passed; answered, it is
    // idle from its last poll on, and its one-second lifespan is soon over.
    clock.advance(2_000);
    expect(await local.app.events.sweeper.sweepOnce()).toEqual([q]);
    expect((await poll(local, who, q, 0, { dont_block: true })).body).toMatchObject({ code: "BAD_EVENT_QUEUE_ID" });
    await own.teardown();
  });
});

describe("size cap", () => {
  it("drops a queue that holds more than the cap: BAD_EVENT_QUEUE_ID, never a truncated history", async () => {
    const local = await ev.start({ env: { EVENTS_QUEUE_MAX_EVENTS: "3" }, consume: false });
    const who = user();
    const q = await queueFor(local, who);
    const other = await queueFor(local, who);
    for (let n = 0; n < 3; n++) await local.app.events.deliverer.doDeliverNotice(randomUUID(), 1, { event: { type: "custom", n }, users: [who.userId] });
    expect((await poll(local, who, q, undefined, { dont_block: true })).body.events).toHaveLength(3);
    // The other queue keeps up; this one does not.
    await poll(local, who, other, 2, { dont_block: true });
    await local.app.events.deliverer.doDeliverNotice(randomUUID(), 1, { event: { type: "custom", n: 3 }, users: [who.userId] });
    expect((await poll(local, who, q, undefined, { dont_block: true })).body).toMatchObject({ code: "BAD_EVENT_QUEUE_ID", queue_id: q });
    expect((await poll(local, who, other, 2, { dont_block: true })).body.events).toEqual([{ id: 3, type: "custom", n: 3 }]);
    await local.close();
  });

  it("a waiting poll learns at once that its queue was dropped", async () => {
    const local = await ev.start({ env: { EVENTS_QUEUE_MAX_EVENTS: "1" }, consume: false });
    const who = user();
    const q = await queueFor(local, who, { client_capabilities: { notification_settings_null: false, bulk_message_deletion: false } });
    const waiting = poll(local, who, q, -1);
    await new Promise((r) => setTimeout(r, 150));
    // One notice, two events for this old-style client: over the cap of 1.
    await local.app.events.deliverer.doDeliverNotice(randomUUID(), 1, {
      event: { type: "delete_message", message_type: "private", message_ids: [1, 2] },
      users: [who.userId],
    });
    expect((await waiting).body).toMatchObject({ code: "BAD_EVENT_QUEUE_ID", queue_id: q });
    await local.close();
  });
});

describe("upgrades", () => {
  it("after a version change, queues that accept it get one restart event", async () => {
    const own = await eventsEnv();
    const local = await own.start({ consume: false });
    const who = user();
    const all = await queueFor(local, who);
    const messagesOnly = await queueFor(local, who, { event_types: ["message"] });
    const { store, clock, log } = local.app.events;
    // First start ever: nothing to announce.
    expect(await notifyRestartIfUpgraded(store, clock, log)).toBe(0);
    await own.redis.set(`${local.config.REDIS_PREFIX}server_version`, "8.0-older/200");
    expect(await notifyRestartIfUpgraded(store, clock, log)).toBe(1);
    // Another instance of the same version starting later stays quiet.
    expect(await notifyRestartIfUpgraded(store, clock, log)).toBe(0);
    const res = await poll(local, who, all, undefined, { dont_block: true });
    expect(res.body.events).toEqual([
      { id: 0, type: "restart", zulip_version: ZULIP_VERSION, zulip_merge_base: ZULIP_MERGE_BASE, zulip_feature_level: 267, server_generation: expect.any(Number), immediate: false },
    ]);
    expect(RestartEvent.parse(res.body.events[0])).toBeTruthy();
    expect((await poll(local, who, messagesOnly, undefined, { dont_block: true })).body.events).toEqual([]);
    await own.teardown();
  });
});


/**
 * Redis's MONITOR on a plain socket, a line per command any client runs, from its "+OK" on.
 * (ioredis's monitor() switches its connection to monitoring only after the "+OK" has been
 * handled, so a command echoed in the same read as the "+OK" was taken for an unexpected reply
 * and thrown as an uncaught error while the rest of the suite kept Redis busy.)
 */
async function monitorRedis(redis: EventsEnv["redis"], onLine: (line: string) => void): Promise<() => void> {
  const { host, port, password, username } = redis.options;
  const socket = net.connect(port ?? 6379, host ?? "127.0.0.1");
  socket.setEncoding("utf8");
  let buffered = "";
  let started: (() => void) | null = null;
  // The "+OK"s of AUTH (when the URL has a password) and of MONITOR come before any command.
  let oks = password ? 2 : 1;
  const ready = new Promise<void>((resolve, reject) => {
    started = resolve;
    socket.once("error", reject);
  });
  socket.on("data", (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf("\r\n"); end >= 0; end = buffered.indexOf("\r\n")) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (oks > 0 && line === "+OK") {
        if (--oks === 0) started?.();
      } else if (line.startsWith("-")) socket.destroy(new Error(`MONITOR refused: ${line}`));
      else onLine(line);
    }
  });
  if (password) socket.write(username ? `AUTH ${username} ${password}\r\n` : `AUTH ${password}\r\n`);
  socket.write("MONITOR\r\n");
  await ready;
  return () => socket.destroy();
}
