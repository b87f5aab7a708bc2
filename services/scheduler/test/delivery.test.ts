import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createPool, InternalClient } from "@chat/platform";
import { deliverNextDue } from "../src/actions/delivery";
import { AccountsClient, MessagingClient } from "../src/clients/services";
import type { SchedulerDeps } from "../src/deps";
import { DeliveryLoop } from "../src/workers/delivery-loop";
import { alice, bob, BOT_ID, CHANNEL, REALM, startHarness, T0, ts, type Harness } from "./helpers";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});
beforeEach(async () => {
  h.clock.set(T0);
  h.peer.messages.length = 0;
  h.peer.sendCalls = 0;
  h.peer.refusing.clear();
  h.peer.sendDelays.clear();
  h.peer.maxInFlight.clear();
  h.peer.checkDelays.clear();
  h.peer.sendErrors.clear();
  h.peer.deactivatedRealms.clear();
  h.peer.users.get(alice.userId)!.is_active = true;
  await h.pool.query("DELETE FROM scheduled_messages");
  await h.pool.query("DELETE FROM outbox");
});

async function schedule(params: Record<string, unknown>, as = alice): Promise<number> {
  const res = await h.call("POST", "/scheduled_messages", { as, params: { scheduled_delivery_timestamp: ts(T0) + 60, ...params } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.scheduled_message_id;
}
const toChannel = (content: string, extra: Record<string, unknown> = {}) => schedule({ type: "stream", to: CHANNEL, topic: "t", content, ...extra });
async function list(as = alice) {
  return (await h.call("GET", "/scheduled_messages", { as })).body.scheduled_messages as any[];
}
/** The `scheduled_messages/remove` client events written so far, whichever action wrote them. */
async function removals() {
  const all = await h.events();
  return all.filter((e) => e.payload.client?.event?.op === "remove").map((e) => e.payload.client);
}
/** A delivery pass whose process dies after messaging accepted each message, before recording it. */
const dyingLoop = () =>
  h.loop({
    intervalMs: 50,
    concurrency: 1,
    hooks: {
      afterSend: () => {
        throw new Error("killed");
      },
    },
  });

describe("delivery", () => {
  it("sends nothing before the time, then sends once and leaves the list", async () => {
    const id = await toChannel("on time", { read_by_sender: true });
    const loop = h.loop();
    expect(await loop.runPass()).toEqual({ delivered: 0, failed: 0 });
    h.clock.advance(59_000);
    expect(await loop.runPass()).toEqual({ delivered: 0, failed: 0 });
    h.clock.advance(1_000);
    expect(await loop.runPass()).toEqual({ delivered: 1, failed: 0 });
    expect(await loop.runPass()).toEqual({ delivered: 0, failed: 0 });
    expect(h.peer.messages).toHaveLength(1);
    const sent = h.peer.messages[0];
    expect(sent.sender).toBe(alice.userId);
    expect(sent.params).toEqual({ type: "stream", to: String(CHANNEL), topic: "t", content: "on time", read_by_sender: "true", idempotency_key: `scheduled:${id}` });
    expect(await list()).toEqual([]);
    const events = await h.events("scheduler.scheduled_message.delivered");
    expect(events.map((e) => e.payload)).toEqual([
      {
        sender_id: alice.userId,
        scheduled_message_id: id,
        message_id: sent.id,
        client: { event: { type: "scheduled_messages", op: "remove", scheduled_message_id: id }, users: [alice.userId] },
      },
    ]);
    // Too late to edit; deleting the delivered row is allowed, as in Zulip.
    const edit = await h.call("PATCH", `/scheduled_messages/${id}`, { as: alice, params: { content: "x" } });
    expect(edit.body).toMatchObject({ code: "BAD_REQUEST", msg: "Scheduled message was already sent" });
  });

  it("delivers direct messages with the stored recipients", async () => {
    await schedule({ type: "direct", to: [bob.userId], content: "psst" });
    h.clock.advance(60_000);
    await h.loop().runPass();
    expect(h.peer.messages.map((m) => m.params)).toEqual([
      expect.objectContaining({ type: "private", to: JSON.stringify([bob.userId]), content: "psst" }),
    ]);
    expect(h.peer.messages[0].params).not.toHaveProperty("topic");
  });

  it("marks a refused message failed, keeps the reason, tells the sender, and recovers after a new time", async () => {
    const id = await toChannel("blocked");
    h.peer.refusing.add(CHANNEL);
    h.clock.advance(60_000);
    expect(await h.loop().runPass()).toEqual({ delivered: 0, failed: 1 });
    const [m] = await list();
    expect(m).toMatchObject({ scheduled_message_id: id, failed: true });
    const { rows } = await h.pool.query("SELECT failure_message FROM scheduled_messages WHERE id = $1", [id]);
    expect(rows[0].failure_message).toBe("You do not have permission to post in this channel.");
    const updates = await h.events("scheduler.scheduled_message.updated");
    expect(updates.map((e) => e.payload)).toEqual([
      {
        sender_id: alice.userId,
        scheduled_message_id: id,
        failure_reason: "You do not have permission to post in this channel.",
        client: { event: { type: "scheduled_messages", op: "update", scheduled_message: m }, users: [alice.userId] },
      },
    ]);
    // The notification bot's direct message to the sender.
    expect(h.peer.messages).toHaveLength(1);
    expect(h.peer.messages[0]).toMatchObject({ sender: BOT_ID, key: `scheduled-failure:${id}:1` });
    expect(h.peer.messages[0].params).toMatchObject({ type: "private", to: JSON.stringify([alice.userId]) });
    // In Zulip's words: the time (shown in the reader's zone), the error quoted, a link to the list.
    expect(h.peer.messages[0].params.content).toBe(
      "The message you scheduled for <time:2030-01-01 12:01:00+00:00> was not sent because of the following error:\n\n" +
        "> You do not have permission to post in this channel.\n\n" +
        "[View scheduled messages](#scheduled)",
    );
    // A failed message is not retried by itself.
    h.clock.advance(3_600_000);
    expect(await h.loop().runPass()).toEqual({ delivered: 0, failed: 0 });

    // Editing without a new time is refused; with one it is pending again.
    const noTime = await h.call("PATCH", `/scheduled_messages/${id}`, { as: alice, params: { content: "try again" } });
    expect(noTime.body).toMatchObject({ code: "BAD_REQUEST", msg: "Scheduled delivery time must be in the future." });
    h.peer.refusing.clear();
    const at = ts(h.clock.now()) + 30;
    const ok = await h.call("PATCH", `/scheduled_messages/${id}`, { as: alice, params: { scheduled_delivery_timestamp: at } });
    expect(ok.status).toBe(200);
    expect((await list())[0]).toMatchObject({ failed: false, scheduled_delivery_timestamp: at });
    h.clock.advance(30_000);
    expect(await h.loop().runPass()).toEqual({ delivered: 1, failed: 0 });
    expect(h.peer.messages.filter((m) => m.sender === alice.userId)).toHaveLength(1);
    expect(await list()).toEqual([]);
  });

  it("re-checks the sender at delivery: a deactivated sender's message fails", async () => {
    await toChannel("from a leaver");
    h.peer.users.get(alice.userId)!.is_active = false;
    h.clock.advance(60_000);
    expect(await h.loop().runPass()).toEqual({ delivered: 0, failed: 1 });
    const { rows } = await h.pool.query("SELECT failed, failure_message FROM scheduled_messages");
    expect(rows[0]).toEqual({ failed: true, failure_message: "Account is deactivated" });
  });

  it("re-checks the organization at delivery: a deactivated organization's message fails, as in Zulip", async () => {
    const id = await toChannel("into the void");
    h.peer.deactivatedRealms.add(REALM);
    h.clock.advance(60_000);
    expect(await h.loop().runPass()).toEqual({ delivered: 0, failed: 1 });
    expect(h.peer.messages.filter((m) => m.sender === alice.userId)).toEqual([]);
    expect(await list()).toEqual([expect.objectContaining({ scheduled_message_id: id, failed: true })]);
    const [update] = await h.events("scheduler.scheduled_message.updated");
    expect(update.payload).toMatchObject({ failure_reason: "This organization has been deactivated", client: { event: { op: "update", scheduled_message: { failed: true } } } });
  });

  it("an edit that raced a failed delivery still needs a new time", async () => {
    const id = await toChannel("first");
    h.peer.checkDelays.set("second", 300);
    h.peer.refusing.add(CHANNEL);
    // The edit reads the pending message and waits for messaging's check; meanwhile the message
    // comes due and fails.
    const editing = h.call("PATCH", `/scheduled_messages/${id}`, { as: alice, params: { content: "second" } });
    await new Promise((r) => setTimeout(r, 50));
    h.clock.advance(60_000);
    expect(await h.loop().runPass()).toEqual({ delivered: 0, failed: 1 });
    const res = await editing;
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Scheduled delivery time must be in the future." });
    expect(await list()).toEqual([expect.objectContaining({ content: "first", failed: true })]);
  });

  it("sends once when the scheduler dies after messaging accepted the message", async () => {
    const id = await toChannel("exactly once");
    h.clock.advance(60_000);
    const dying = h.loop({
      intervalMs: 50,
      concurrency: 1,
      hooks: {
        afterSend: () => {
          throw new Error("killed");
        },
      },
    });
    const first = await dying.runPass();
    expect(first).toMatchObject({ delivered: 0, failed: 0, error: "killed" });
    expect(h.peer.sendCalls).toBe(1);
    expect((await list()).map((m) => m.scheduled_message_id)).toEqual([id]);

    // A fresh run (the restarted process) sends it again with the same key: still one message.
    expect(await h.loop().runPass()).toEqual({ delivered: 1, failed: 0 });
    expect(h.peer.sendCalls).toBe(2);
    expect(h.peer.messages).toHaveLength(1);
    const { rows } = await h.pool.query("SELECT delivered, delivered_message_id FROM scheduled_messages WHERE id = $1", [id]);
    expect(rows[0]).toEqual({ delivered: true, delivered_message_id: h.peer.messages[0].id });
    expect(await h.events("scheduler.scheduled_message.delivered")).toHaveLength(1);
  });

  it("two replicas racing on the same due rows deliver each message exactly once", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) ids.push(await toChannel(`race ${i}`, { scheduled_delivery_timestamp: ts(T0) + 1 + (i % 5) }));
    h.clock.advance(10_000);
    // A second replica: its own pool (its own connections), the same database.
    const pool2 = createPool(h.env.databaseUrl, "scheduler", 8);
    try {
      const replica2: SchedulerDeps = { ...h.deps, pool: pool2 };
      const a = new DeliveryLoop(h.deps, { intervalMs: 50, concurrency: 4 });
      const b = new DeliveryLoop(replica2, { intervalMs: 50, concurrency: 4 });
      const [ra, rb] = await Promise.all([a.runPass(), b.runPass()]);
      expect(ra.delivered + rb.delivered).toBe(40);
      expect(ra.error).toBeUndefined();
      expect(rb.error).toBeUndefined();
    } finally {
      await pool2.end();
    }
    // Claims never overlapped: one send per row, no repeat needed the idempotency key.
    expect(h.peer.sendCalls).toBe(40);
    expect(new Set(h.peer.messages.map((m) => m.key))).toEqual(new Set(ids.map((id) => `scheduled:${id}`)));
    expect(await h.events("scheduler.scheduled_message.delivered")).toHaveLength(40);
  });

  it("sends one sender's messages one after another in scheduled order, other senders' alongside", async () => {
    // All due together; the first is slow to be accepted, so parallel claimers would overtake it.
    for (let i = 0; i < 4; i++) await toChannel(`alice ${i}`, { scheduled_delivery_timestamp: ts(T0) + 10 });
    await schedule({ type: "stream", to: CHANNEL, topic: "t", content: "bob 0", scheduled_delivery_timestamp: ts(T0) + 10 }, bob);
    h.peer.sendDelays.set("alice 0", 300);
    h.peer.sendDelays.set("alice 1", 50);
    h.clock.advance(10_000);
    expect(await h.loop({ intervalMs: 50, concurrency: 4 }).runPass()).toEqual({ delivered: 5, failed: 0 });
    const contents = h.peer.messages.map((m) => m.params.content);
    expect(contents.filter((c) => c.startsWith("alice"))).toEqual(["alice 0", "alice 1", "alice 2", "alice 3"]);
    // Bob did not wait for Alice's slow message.
    expect(contents.indexOf("bob 0")).toBeLessThan(contents.indexOf("alice 0"));
    expect(h.peer.maxInFlight.get(alice.userId)).toBe(1);
  });

  it("after an outage delivers everything that came due, once", async () => {
    const down = new DeliveryLoop(
      { ...h.deps, messaging: new MessagingClient(new InternalClient("http://127.0.0.1:9", h.env.vars.INTERNAL_TOKEN)) },
      { intervalMs: 50, concurrency: 2 },
    );
    for (let i = 0; i < 5; i++) await toChannel(`while down ${i}`, { scheduled_delivery_timestamp: ts(T0) + 60 * (i + 1) });
    h.clock.advance(10 * 60_000);
    const failedPass = await down.runPass();
    expect(failedPass.delivered).toBe(0);
    expect(failedPass.error).toBeDefined();
    expect(await list()).toHaveLength(5);
    expect((await list()).every((m) => !m.failed)).toBe(true);

    // Messaging is back hours later: everything due goes out in one pass, in order, once.
    h.clock.advance(5 * 3_600_000);
    const loop = h.loop();
    expect(await loop.runPass()).toEqual({ delivered: 5, failed: 0 });
    expect(await loop.runPass()).toEqual({ delivered: 0, failed: 0 });
    expect(h.peer.messages.map((m) => m.params.content)).toEqual([0, 1, 2, 3, 4].map((i) => `while down ${i}`));
  });

  it("keeps a message due while accounts cannot be reached", async () => {
    await toChannel("needs the sender");
    h.clock.advance(60_000);
    const deps = { ...h.deps, accounts: new AccountsClient(new InternalClient("http://127.0.0.1:9", h.env.vars.INTERNAL_TOKEN)) };
    expect(await deliverNextDue(deps).catch((e) => e.code)).toBe("SERVICE_UNAVAILABLE");
    expect(await list()).toHaveLength(1);
    expect(await h.loop().runPass()).toEqual({ delivered: 1, failed: 0 });
  });

  it("runs on its own timer", async () => {
    await toChannel("timer");
    h.clock.advance(60_000);
    const loop = h.loop({ intervalMs: 20, concurrency: 1 });
    loop.start();
    try {
      for (let i = 0; i < 100 && h.peer.messages.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await loop.stop();
    }
    expect(h.peer.messages).toHaveLength(1);
  });
});

describe("deleting or editing around a delivery", () => {
  it("a deletion that waited for a delivery in progress succeeds as in Zulip, without a second remove", async () => {
    const id = await toChannel("slow to send");
    h.peer.sendDelays.set("slow to send", 300);
    h.clock.advance(60_000);
    const pass = h.loop().runPass();
    await new Promise((r) => setTimeout(r, 100));
    // The delivery holds the row: the deletion waits for it.
    const deleting = h.call("DELETE", `/scheduled_messages/${id}`, { as: alice });
    expect(await pass).toEqual({ delivered: 1, failed: 0 });
    const res = await deleting;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "" });
    expect(h.peer.messages).toHaveLength(1);
    expect(await removals()).toEqual([{ event: { type: "scheduled_messages", op: "remove", scheduled_message_id: id }, users: [alice.userId] }]);
    expect(await h.events("scheduler.scheduled_message.deleted")).toEqual([]);
    const again = await h.call("DELETE", `/scheduled_messages/${id}`, { as: alice });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Scheduled message does not exist" });
  });

  it("an edit after a delivery the scheduler could not record is refused: the message went out as it was", async () => {
    const id = await toChannel("as first written");
    h.clock.advance(60_000);
    expect(await dyingLoop().runPass()).toMatchObject({ delivered: 0, error: "killed" });
    // The list still shows it: nothing recorded the delivery.
    expect((await list()).map((m) => m.scheduled_message_id)).toEqual([id]);

    const edit = await h.call("PATCH", `/scheduled_messages/${id}`, { as: alice, params: { content: "second thoughts" } });
    expect(edit.status).toBe(400);
    expect(edit.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Scheduled message was already sent" });
    // The delivery is recorded now, with the one removal the sender's clients were owed.
    expect(await list()).toEqual([]);
    expect(await removals()).toEqual([{ event: { type: "scheduled_messages", op: "remove", scheduled_message_id: id }, users: [alice.userId] }]);
    const [delivered] = await h.events("scheduler.scheduled_message.delivered");
    expect(delivered.payload.message_id).toBe(h.peer.messages[0].id);
    expect(await h.events("scheduler.scheduled_message.updated")).toEqual([]);
    // Nothing more goes out: one message, as first written.
    expect(await h.loop().runPass()).toEqual({ delivered: 0, failed: 0 });
    expect(h.peer.messages.map((m) => m.params.content)).toEqual(["as first written"]);
  });

  it("a deletion after a delivery the scheduler could not record removes it once and sends nothing more", async () => {
    const id = await toChannel("already out");
    h.clock.advance(60_000);
    await dyingLoop().runPass();
    const res = await h.call("DELETE", `/scheduled_messages/${id}`, { as: alice });
    expect(res.status).toBe(200);
    expect(await removals()).toEqual([{ event: { type: "scheduled_messages", op: "remove", scheduled_message_id: id }, users: [alice.userId] }]);
    expect(await list()).toEqual([]);
    expect(await h.loop().runPass()).toEqual({ delivered: 0, failed: 0 });
    expect(h.peer.messages).toHaveLength(1);
  });

  it("an edit of a due message that was never sent applies, and the new text is what goes out", async () => {
    const id = await toChannel("draft");
    h.peer.sendErrors.set("draft", { status: 429, code: "RATE_LIMIT_HIT" });
    h.clock.advance(60_000);
    const loop = h.loop();
    expect(await loop.runPass()).toEqual({ delivered: 0, failed: 0, deferred: 1 });
    const edit = await h.call("PATCH", `/scheduled_messages/${id}`, { as: alice, params: { content: "final" } });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    h.clock.advance(60_000);
    expect(await loop.runPass()).toEqual({ delivered: 1, failed: 0 });
    expect(h.peer.messages.map((m) => m.params.content)).toEqual(["final"]);
    expect(await removals()).toHaveLength(1);
  });

  it("an edit of a due message while messaging cannot look up sends (an earlier release) is a 503 to retry, and changes nothing", async () => {
    const id = await toChannel("draft");
    h.clock.advance(60_000);
    h.peer.lacksSentLookup = true;
    try {
      const edit = await h.call("PATCH", `/scheduled_messages/${id}`, { as: alice, params: { content: "final" } });
      expect(edit.status).toBe(503);
      expect(edit.body).toMatchObject({ result: "error" });
      expect((await list()).map((m) => m.content)).toEqual(["draft"]);
    } finally {
      h.peer.lacksSentLookup = false;
    }
  });

  it("a sender deactivated after a delivery the scheduler could not record: the message stands, no failure", async () => {
    const id = await toChannel("said before leaving");
    h.clock.advance(60_000);
    await dyingLoop().runPass();
    h.peer.users.get(alice.userId)!.is_active = false;
    expect(await h.loop().runPass()).toEqual({ delivered: 1, failed: 0 });
    const { rows } = await h.pool.query("SELECT delivered, failed, delivered_message_id FROM scheduled_messages WHERE id = $1", [id]);
    expect(rows[0]).toEqual({ delivered: true, failed: false, delivered_message_id: h.peer.messages[0].id });
    // No failure notice from the notification bot, no failed state shown.
    expect(h.peer.messages).toHaveLength(1);
    expect(await h.events("scheduler.scheduled_message.updated")).toEqual([]);
  });
});

describe("retryable answers from messaging", () => {
  const codes: Record<number, string> = { 401: "UNAUTHORIZED", 404: "BAD_REQUEST", 408: "BAD_REQUEST", 429: "RATE_LIMIT_HIT" };
  for (const status of [401, 404, 408, 429]) {
    it(`a ${status} puts that message off; the other senders' due messages go out in the same pass`, async () => {
      await toChannel("stuck", { scheduled_delivery_timestamp: ts(T0) + 10 });
      await toChannel("after stuck", { scheduled_delivery_timestamp: ts(T0) + 20 });
      for (let i = 0; i < 3; i++) await schedule({ type: "stream", to: CHANNEL, topic: "t", content: `bob ${i}`, scheduled_delivery_timestamp: ts(T0) + 30 }, bob);
      h.peer.sendErrors.set("stuck", { status, code: codes[status] });
      h.clock.advance(60_000);
      const loop = h.loop({ intervalMs: 1000, concurrency: 2 });
      expect(await loop.runPass()).toEqual({ delivered: 3, failed: 0, deferred: 1 });
      expect(h.peer.messages.map((m) => m.params.content)).toEqual(["bob 0", "bob 1", "bob 2"]);
      // Not failed, still listed; Alice's later message keeps its place behind it.
      expect((await list()).map((m) => [m.content, m.failed])).toEqual([["stuck", false], ["after stuck", false]]);

      // It waits out its delay (doubling with each retry) instead of being tried on every pass.
      const calls = h.peer.sendCalls;
      expect(await loop.runPass()).toEqual({ delivered: 0, failed: 0 });
      expect(h.peer.sendCalls).toBe(calls);
      h.clock.advance(1_000);
      expect(await loop.runPass()).toEqual({ delivered: 0, failed: 0, deferred: 1 });
      h.clock.advance(1_000);
      expect(await loop.runPass()).toEqual({ delivered: 0, failed: 0 });
      expect(h.peer.sendCalls).toBe(calls + 1);

      // Once messaging answers again, both go, in order.
      h.peer.sendErrors.clear();
      h.clock.advance(1_000);
      expect(await loop.runPass()).toEqual({ delivered: 2, failed: 0 });
      expect(h.peer.messages.map((m) => m.params.content).slice(3)).toEqual(["stuck", "after stuck"]);
    });
  }

  it("a rate limit's retry-after is waited for", async () => {
    await toChannel("limited");
    h.peer.sendErrors.set("limited", { status: 429, code: "RATE_LIMIT_HIT", extra: { "retry-after": 30 } });
    h.clock.advance(60_000);
    const loop = h.loop({ intervalMs: 1000, concurrency: 1 });
    expect(await loop.runPass()).toEqual({ delivered: 0, failed: 0, deferred: 1 });
    h.peer.sendErrors.clear();
    h.clock.advance(29_000);
    expect(await loop.runPass()).toEqual({ delivered: 0, failed: 0 });
    h.clock.advance(1_000);
    expect(await loop.runPass()).toEqual({ delivered: 1, failed: 0 });
  });
});
