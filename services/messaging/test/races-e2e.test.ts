import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoUser } from "@chat/testkit";
import { drain, NO_RATE_LIMITS, ok, register, sleep, tally, typesOf, useDemoStack, withOutboxLocked, type Answer, type EventQueue } from "@chat/testkit/e2e";

/**
 * The same request sent many times at once through the whole stack, as a double-clicking client
 * or a retrying proxy sends it: every answer is one Zulip gives in some serial order of them, none
 * is a 5xx, and the clients hear of each change once. Absence is shown by order: a marker change
 * made after the burst comes after every event of the burst in the queue.
 */

let org: DemoOrg;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org] = demo.orgs));
const { as } = e2e;

/**
 * Identical requests at once: well over a service's database pool (10 connections by default),
 * and enough that some meet in the narrow window between reading a row and locking it.
 */
const BURST = 40;

const burst = (n: number, send: (i: number) => Promise<Answer>): Promise<Answer[]> => Promise.all(Array.from({ length: n }, (_, i) => send(i)));

/** The queue's events up to the first that `isMarker` accepts (that one left out). */
async function eventsBefore(q: EventQueue, isMarker: (e: any) => boolean, timeoutMs = 15_000): Promise<any[]> {
  const got: any[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const e of await drain(q)) {
      if (isMarker(e)) return got;
      got.push(e);
    }
    if (Date.now() > deadline) throw new Error(`no marker event; got ${JSON.stringify(got)}`);
    await sleep(100);
  }
}

/** Runs `send` with messaging's transactions held at their first event until `waiting` wait (withOutboxLocked). */
const withTransactionsHeld = <T>(waiting: number, send: () => Promise<T>): Promise<T> => withOutboxLocked(e2e.stack.env.databaseUrl, "messaging", waiting, send);

let channels = 0;
async function newChannel(owner: DemoUser): Promise<{ id: number; name: string }> {
  const name = `race ${++channels} ${Date.now().toString(36)}`;
  ok(await as(owner).post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name }]) }));
  return { id: ok(await as(owner).get("/get_stream_id", { stream: name })).stream_id, name };
}

describe("identical requests at once", () => {
  it("subscribing to channels: every request succeeds (none waits out the database pool), each channel added once", async () => {
    const { owner, member } = org.users;
    // Several channels per request widen the window between the subscriptions' lock and the last insert.
    const channels = await Promise.all(Array.from({ length: 8 }, () => newChannel(owner)));
    const names = channels.map((c) => c.name);
    const q = await register(as(member), { event_types: JSON.stringify(["subscription"]) });
    const answers = await burst(BURST, () => as(member).post("/users/me/subscriptions", { subscriptions: JSON.stringify(names.map((name) => ({ name }))) }));
    expect(tally(answers)).toEqual({ "200 ": BURST });
    const subscribed = answers.flatMap((a) => a.body.subscribed[String(member.user_id)] ?? []);
    expect(subscribed.sort()).toEqual([...names].sort());

    ok(await as(member).post("/users/me/subscriptions/properties", { subscription_data: JSON.stringify([{ stream_id: channels[0].id, property: "pin_to_top", value: true }]) }));
    const events = await eventsBefore(q, (e) => e.op === "update" && e.property === "pin_to_top");
    expect(new Set(typesOf(events))).toEqual(new Set(["subscription/add"]));
    const added = events.flatMap((e) => e.subscriptions.map((s: any) => s.stream_id));
    expect(added.sort((a, b) => a - b)).toEqual(channels.map((c) => c.id).sort((a, b) => a - b));
  });

  it("renaming a channel to one new name: one rename, the others find the channel already has that name", async () => {
    const { owner, admin } = org.users;
    const channel = await newChannel(owner);
    const q = await register(as(admin), { event_types: JSON.stringify(["stream"]) });
    const newName = `${channel.name} renamed`;
    const answers = await burst(BURST, () => as(owner).patch(`/streams/${channel.id}`, { new_name: newName }));
    expect(tally(answers)).toEqual({ "200 ": 1, "400 Channel already has that name!": BURST - 1 });
    for (const a of answers.filter((x) => x.status === 400)) expect(a.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Channel already has that name!" });

    ok(await as(owner).patch(`/streams/${channel.id}`, { description: "marker" }));
    const events = await eventsBefore(q, (e) => e.op === "update" && e.property === "description");
    expect(events.map((e) => [e.type, e.op, e.property, e.value])).toEqual([["stream", "update", "name", newName]]);
    expect(ok(await as(owner).get(`/streams/${channel.id}`)).stream.name).toBe(newName);
    // The notification bot told the channel once.
    const { messages } = ok(
      await as(owner).get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "channel", operand: channel.id }]) }),
    );
    expect(messages.filter((m: any) => /renamed/.test(m.content))).toHaveLength(1);
  });

  it("muting one topic: every request succeeds, one user_topic event", async () => {
    const { owner } = org.users;
    const channel = await newChannel(owner);
    const q = await register(as(owner), { event_types: JSON.stringify(["user_topic"]) });
    const answers = await withTransactionsHeld(3, () => burst(BURST, () => as(owner).post("/user_topics", { stream_id: channel.id, topic: "lunch", visibility_policy: 1 })));
    expect(tally(answers)).toEqual({ "200 ": BURST });

    ok(await as(owner).post("/user_topics", { stream_id: channel.id, topic: "marker", visibility_policy: 1 }));
    const events = await eventsBefore(q, (e) => e.topic_name === "marker");
    expect(events.map((e) => [e.type, e.topic_name, e.visibility_policy])).toEqual([["user_topic", "lunch", 1]]);
    const unmuted = await withTransactionsHeld(3, () => burst(BURST, () => as(owner).post("/user_topics", { stream_id: channel.id, topic: "lunch", visibility_policy: 0 })));
    expect(tally(unmuted)).toEqual({ "200 ": BURST });
    ok(await as(owner).post("/user_topics", { stream_id: channel.id, topic: "marker", visibility_policy: 0 }));
    const cleared = await eventsBefore(q, (e) => e.topic_name === "marker");
    expect(cleared.map((e) => [e.type, e.topic_name, e.visibility_policy])).toEqual([["user_topic", "lunch", 0]]);
  });
});
