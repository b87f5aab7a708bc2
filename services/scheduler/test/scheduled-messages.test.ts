import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ScheduledMessagesEvent } from "@chat/contracts";
import { alice, bob, BOT_ID, CHANNEL, startHarness, T0, ts, type Harness } from "./helpers";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});
beforeEach(async () => {
  h.clock.set(T0);
  await h.pool.query("DELETE FROM scheduled_messages");
  await h.pool.query("DELETE FROM outbox");
});

const inAnHour = () => ts(T0) + 3600;

async function schedule(params: Record<string, unknown>, as = alice) {
  return h.call("POST", "/scheduled_messages", { as, params });
}
async function list(as = alice) {
  const res = await h.call("GET", "/scheduled_messages", { as });
  expect(res.status).toBe(200);
  return res.body.scheduled_messages as any[];
}
async function rowCount() {
  const { rows } = await h.pool.query("SELECT count(*)::int AS n FROM scheduled_messages");
  return rows[0].n as number;
}

describe("POST /scheduled_messages", () => {
  it("schedules a channel message and tells the sender's clients", async () => {
    const res = await schedule({ type: "stream", to: CHANNEL, topic: "plans", content: "hello  ", scheduled_delivery_timestamp: inAnHour() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "", scheduled_message_id: expect.any(Number) });
    const id = res.body.scheduled_message_id;
    const expected = {
      scheduled_message_id: id,
      type: "stream",
      to: CHANNEL,
      topic: "plans",
      content: "hello",
      rendered_content: "<p>hello</p>",
      scheduled_delivery_timestamp: inAnHour(),
      failed: false,
    };
    expect(await list()).toEqual([expected]);
    expect(await list(bob)).toEqual([]);
    const events = await h.events("scheduler.scheduled_message.created");
    expect(events).toHaveLength(1);
    expect(events[0].payload.client).toEqual({ event: { type: "scheduled_messages", op: "add", scheduled_messages: [expected] }, users: [alice.userId] });
    expect(ScheduledMessagesEvent.parse(events[0].payload.client.event)).toBeTruthy();
  });

  it("accepts every spelling of the type and the legacy subject", async () => {
    for (const type of ["channel", "stream"]) {
      const res = await schedule({ type, to: [CHANNEL], subject: "old name", content: "x", scheduled_delivery_timestamp: inAnHour() });
      expect(res.status).toBe(200);
    }
    for (const type of ["direct", "private"]) {
      const res = await schedule({ type, to: [bob.userId, bob.userId], content: "dm", topic: "ignored", scheduled_delivery_timestamp: inAnHour() });
      expect(res.status).toBe(200);
    }
    const all = await list();
    expect(all.map((m) => m.type)).toEqual(["stream", "stream", "private", "private"]);
    expect(all[0].topic).toBe("old name");
    expect(all[2].to).toEqual([bob.userId]);
    expect(all[2]).not.toHaveProperty("topic");
  });

  it("keeps a direct message's to as the other participants in id order (the sender only when alone)", async () => {
    for (const to of [[alice.userId, bob.userId], [bob.userId, BOT_ID, alice.userId], [alice.userId, alice.userId]]) {
      expect((await schedule({ type: "direct", to, content: "dm", scheduled_delivery_timestamp: inAnHour() })).status).toBe(200);
    }
    expect((await list()).map((m) => m.to)).toEqual([[bob.userId], [BOT_ID, bob.userId], [alice.userId]]);
    const added = await h.events("scheduler.scheduled_message.created");
    expect(added.map((e) => e.payload.client.event.scheduled_messages[0].to)).toEqual([[bob.userId], [BOT_ID, bob.userId], [alice.userId]]);
  });

  it("keeps read_by_sender for delivery", async () => {
    const res = await schedule({ type: "direct", to: [bob.userId], content: "dm", scheduled_delivery_timestamp: inAnHour(), read_by_sender: true });
    expect(res.status).toBe(200);
    const { rows } = await h.pool.query("SELECT read_by_sender, sending_client FROM scheduled_messages");
    expect(rows[0]).toEqual({ read_by_sender: true, sending_client: "website" });
  });

  it("lists by delivery time", async () => {
    await schedule({ type: "direct", to: [bob.userId], content: "later", scheduled_delivery_timestamp: inAnHour() + 60 });
    await schedule({ type: "direct", to: [bob.userId], content: "sooner", scheduled_delivery_timestamp: inAnHour() });
    expect((await list()).map((m) => m.content)).toEqual(["sooner", "later"]);
  });

  const bad: Array<[string, Record<string, unknown>, number, string, string | RegExp, Record<string, unknown>?]> = [
    ["a past time", { scheduled_delivery_timestamp: ts(T0) - 1 }, 400, "BAD_REQUEST", "Scheduled delivery time must be in the future."],
    ["the current time", { scheduled_delivery_timestamp: ts(T0) }, 400, "BAD_REQUEST", "Scheduled delivery time must be in the future."],
    ["a time after year 9999", { scheduled_delivery_timestamp: 9_000_000_000_000 }, 400, "BAD_REQUEST", "Invalid scheduled_delivery_timestamp"],
    ["a negative time", { scheduled_delivery_timestamp: -5 }, 400, "BAD_REQUEST", "Scheduled delivery time must be in the future."],
    ["a missing channel", { to: 999 }, 400, "STREAM_DOES_NOT_EXIST", "Channel with ID '999' does not exist", { stream_id: 999 }],
    ["a missing topic", { topic: undefined }, 400, "BAD_REQUEST", "Missing topic"],
    ["two channels", { to: [CHANNEL, 101] }, 400, "BAD_REQUEST", "Cannot send to multiple channels"],
    ["an invalid user", { type: "direct", to: [bob.userId, 4242] }, 400, "BAD_REQUEST", "Invalid user ID 4242"],
    ["a direct message to an integer", { type: "direct", to: bob.userId }, 400, "BAD_REQUEST", "Invalid data type for recipients"],
    ["no recipients", { type: "direct", to: [] }, 400, "BAD_REQUEST", "Message must have recipients"],
    ["an unknown type", { type: "broadcast" }, 400, "BAD_REQUEST", "Invalid type"],
    ["to that is not JSON", { to: "general" }, 400, "BAD_REQUEST", "to is not valid JSON"],
    ["to of the wrong type", { to: '"general"' }, 400, "BAD_REQUEST", "Invalid to"],
    ["a timestamp that is not an integer", { scheduled_delivery_timestamp: "soon" }, 400, "BAD_REQUEST", /^scheduled_delivery_timestamp is not (an integer|valid JSON)$/],
    ["read_by_sender not a boolean", { read_by_sender: "yes" }, 400, "BAD_REQUEST", /^read_by_sender is not (a boolean|valid JSON)$/],
    ["empty content", { content: "   " }, 400, "BAD_REQUEST", "Message must not be empty"],
    ["no content", { content: undefined }, 400, "REQUEST_VARIABLE_MISSING", "Missing 'content' argument", { var_name: "content" }],
    ["no timestamp", { scheduled_delivery_timestamp: undefined }, 400, "REQUEST_VARIABLE_MISSING", "Missing 'scheduled_delivery_timestamp' argument"],
    ["no type", { type: undefined }, 400, "REQUEST_VARIABLE_MISSING", "Missing 'type' argument"],
    ["null bytes", { content: "a\u0000b" }, 400, "BAD_REQUEST", "content must not contain null bytes"],
  ];
  it.each(bad)("refuses %s and stores nothing", async (_name, override, status, code, msg, extra) => {
    const params = { type: "stream", to: CHANNEL, topic: "t", content: "hi", scheduled_delivery_timestamp: inAnHour(), ...override };
    const res = await schedule(params);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ result: "error", code, msg: typeof msg === "string" ? msg : expect.stringMatching(msg), ...extra });
    expect(await rowCount()).toBe(0);
    expect(await h.events()).toEqual([]);
  });

  it("lists unsupported parameters as ignored", async () => {
    const res = await schedule({ type: "direct", to: [bob.userId], content: "x", scheduled_delivery_timestamp: inAnHour(), foo: "1" });
    expect(res.body.ignored_parameters_unsupported).toEqual(["foo"]);
  });
});

describe("PATCH /scheduled_messages/{id}", () => {
  async function create(params: Record<string, unknown> = {}) {
    const res = await schedule({ type: "stream", to: CHANNEL, topic: "plans", content: "first", scheduled_delivery_timestamp: inAnHour(), ...params });
    expect(res.status).toBe(200);
    await h.pool.query("DELETE FROM outbox");
    return res.body.scheduled_message_id as number;
  }
  const edit = (id: number, params: Record<string, unknown>, as = alice) => h.call("PATCH", `/scheduled_messages/${id}`, { as, params });

  it("changes only the content, re-rendered, with an update event", async () => {
    const id = await create();
    const res = await edit(id, { content: "second" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "" });
    const [m] = await list();
    expect(m).toMatchObject({ content: "second", rendered_content: "<p>second</p>", topic: "plans", to: CHANNEL, scheduled_delivery_timestamp: inAnHour() });
    const events = await h.events("scheduler.scheduled_message.updated");
    expect(events.map((e) => e.payload.client.event)).toEqual([{ type: "scheduled_messages", op: "update", scheduled_message: m }]);
    expect(events[0].payload.client.users).toEqual([alice.userId]);
  });

  it("changes only the topic (also as subject)", async () => {
    const id = await create();
    expect((await edit(id, { topic: "new topic" })).status).toBe(200);
    expect((await list())[0]).toMatchObject({ topic: "new topic", content: "first" });
    expect((await edit(id, { subject: "older name" })).status).toBe(200);
    expect((await list())[0].topic).toBe("older name");
  });

  it("changes only the delivery time", async () => {
    const id = await create();
    expect((await edit(id, { scheduled_delivery_timestamp: inAnHour() + 600 })).status).toBe(200);
    expect((await list())[0]).toMatchObject({ scheduled_delivery_timestamp: inAnHour() + 600, content: "first", topic: "plans" });
  });

  it("changes only the recipient within the type", async () => {
    const id = await create({ type: "direct", to: [bob.userId], topic: undefined });
    expect((await edit(id, { to: [bob.userId, BOT_ID] })).status).toBe(200);
    expect((await list())[0]).toMatchObject({ type: "private", to: [BOT_ID, bob.userId] });
  });

  it("shows a direct message's to as the other participants in id order, as Zulip does", async () => {
    const id = await create({ type: "direct", to: [bob.userId], topic: undefined });
    expect((await edit(id, { to: [alice.userId, bob.userId, bob.userId] })).status).toBe(200);
    const [updated] = await h.events("scheduler.scheduled_message.updated");
    expect(updated.payload.client.event.scheduled_message.to).toEqual([bob.userId]);
    expect((await list())[0].to).toEqual([bob.userId]);
    expect((await edit(id, { to: [alice.userId] })).status).toBe(200);
    expect((await list())[0].to).toEqual([alice.userId]);
  });

  it("ignores the topic of a direct message", async () => {
    const id = await create({ type: "direct", to: [bob.userId], topic: undefined });
    expect((await edit(id, { topic: "nope" })).status).toBe(200);
    expect((await list())[0]).not.toHaveProperty("topic");
  });

  it("changes the type with the recipient (and a topic for channels)", async () => {
    const id = await create();
    expect((await edit(id, { type: "direct" })).body).toMatchObject({ code: "BAD_REQUEST", msg: "Recipient required when updating type of scheduled message." });
    // With neither recipient nor topic, the recipient is asked for first.
    expect((await edit(id, { type: "channel" })).body).toMatchObject({ code: "BAD_REQUEST", msg: "Recipient required when updating type of scheduled message." });
    expect((await edit(id, { type: "direct", to: [bob.userId], topic: "ignored" })).status).toBe(200);
    expect((await list())[0]).toEqual(expect.objectContaining({ type: "private", to: [bob.userId] }));
    expect((await list())[0]).not.toHaveProperty("topic");
    expect((await edit(id, { type: "channel", to: CHANNEL })).body).toMatchObject({ msg: "Topic required when updating scheduled message type to channel." });
    expect((await edit(id, { type: "channel", to: CHANNEL, topic: "back" })).status).toBe(200);
    expect((await list())[0]).toMatchObject({ type: "stream", to: CHANNEL, topic: "back", content: "first" });
  });

  it("two edits at once both take effect: neither overwrites the other with what it read before", async () => {
    const id = await create();
    h.peer.checkDelays.set("slow content", 300);
    try {
      // The content edit waits for messaging's check while the topic edit is applied.
      const contentEdit = edit(id, { content: "slow content" });
      await new Promise((r) => setTimeout(r, 50));
      expect((await edit(id, { topic: "new topic" })).status).toBe(200);
      expect((await contentEdit).status).toBe(200);
    } finally {
      h.peer.checkDelays.clear();
    }
    const [m] = await list();
    expect(m).toMatchObject({ content: "slow content", rendered_content: "<p>slow content</p>", topic: "new topic" });
    const updates = (await h.events("scheduler.scheduled_message.updated")).map((e) => e.payload.client.event.scheduled_message);
    expect(updates.map((u) => [u.topic, u.content])).toEqual([["new topic", "first"], ["new topic", "slow content"]]);
  });

  it("refuses bad edits and changes nothing", async () => {
    const id = await create();
    const before = await list();
    const cases: Array<[Record<string, unknown>, string, string, Record<string, unknown>?]> = [
      [{}, "BAD_REQUEST", "Nothing to change"],
      [{ scheduled_delivery_timestamp: ts(T0) - 10 }, "BAD_REQUEST", "Scheduled delivery time must be in the future."],
      [{ to: 999 }, "STREAM_DOES_NOT_EXIST", "Channel with ID '999' does not exist", { stream_id: 999 }],
      [{ type: "direct", to: [4242] }, "BAD_REQUEST", "Invalid user ID 4242"],
      [{ content: "" }, "BAD_REQUEST", "Message must not be empty"],
      [{ type: "other", to: 1 }, "BAD_REQUEST", "Invalid type"],
    ];
    for (const [params, code, msg, extra] of cases) {
      const res = await edit(id, params);
      expect(res.status, msg).toBe(400);
      expect(res.body).toMatchObject({ result: "error", code, msg, ...extra });
    }
    expect(await list()).toEqual(before);
    expect(await h.events()).toEqual([]);
  });

  it("answers 404 for a missing id, another user's message, or a bad id", async () => {
    const id = await create();
    for (const [target, as] of [[id + 1000, alice], [id, bob]] as const) {
      const res = await edit(target, { content: "x" }, as);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Scheduled message does not exist" });
    }
    const other = { ...alice, realmId: alice.realmId + 1 };
    expect((await edit(id, { content: "x" }, other)).status).toBe(404);
    expect((await h.call("PATCH", "/scheduled_messages/abc", { as: alice, params: { content: "x" } })).body.code).toBe("BAD_REQUEST");
    expect((await list())[0].content).toBe("first");
  });
});

describe("DELETE /scheduled_messages/{id}", () => {
  it("removes it with a remove event; others' and missing ones answer 404", async () => {
    const res = await schedule({ type: "direct", to: [bob.userId], content: "bye", scheduled_delivery_timestamp: inAnHour() });
    const id = res.body.scheduled_message_id;
    const notMine = await h.call("DELETE", `/scheduled_messages/${id}`, { as: bob });
    expect(notMine.status).toBe(404);
    expect(notMine.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Scheduled message does not exist" });
    const ok = await h.call("DELETE", `/scheduled_messages/${id}`, { as: alice });
    expect(ok.body).toEqual({ result: "success", msg: "" });
    expect(await list()).toEqual([]);
    const events = await h.events("scheduler.scheduled_message.deleted");
    expect(events.map((e) => e.payload.client)).toEqual([
      { event: { type: "scheduled_messages", op: "remove", scheduled_message_id: id }, users: [alice.userId] },
    ]);
    expect((await h.call("DELETE", `/scheduled_messages/${id}`, { as: alice })).status).toBe(404);
  });
});

describe("register state", () => {
  it("returns scheduled_messages when asked for (or for everything)", async () => {
    await schedule({ type: "direct", to: [bob.userId], content: "x", scheduled_delivery_timestamp: inAnHour() });
    const all = await h.call("POST", "/internal/register_state/scheduler", { as: alice, params: {} });
    expect(all.status).toBe(200);
    expect(all.body.scheduled_messages).toEqual(await list());
    const some = await h.call("POST", "/internal/register_state/scheduler", { as: alice, params: { fetch_event_types: ["scheduled_messages"] } });
    expect(some.body.scheduled_messages).toHaveLength(1);
    const none = await h.call("POST", "/internal/register_state/scheduler", { as: alice, params: { fetch_event_types: ["message"] } });
    expect(none.body).toEqual({ result: "success", msg: "" });
  });
});
