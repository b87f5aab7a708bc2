import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoClient, runDemo, startProxy, startStack, type ApiClient, type DemoOutput, type DemoUser, type Stack, type TcpProxy } from "@chat/testkit";
import { register as registerQueue, sleep, until, waitForEvents, type EventQueue } from "@chat/testkit/e2e";

/**
 * Scheduled messages and uploads through the whole stack (gateway, accounts, messaging,
 * scheduler, events as processes), as a Zulip client uses them. Time is real here, so the
 * scheduler runs short intervals and messages are due a second or two ahead.
 */

// Unused uploads expire 3 seconds after upload in this stack; claimed ones stay.
const RETENTION_DAYS = String(3 / 86_400);

let stack: Stack;
let demo: DemoOutput;
let uploadsDir: string;
/** Messaging's connection to RabbitMQ, which one test stalls. */
let messagingAmqp: TcpProxy;

beforeAll(async () => {
  uploadsDir = await mkdtemp(path.join(os.tmpdir(), "e2e-uploads-"));
  let amqpUrl = "";
  messagingAmqp = await startProxy(() => amqpUrl);
  stack = await startStack({
    env: { UPLOADS_DIR: uploadsDir },
    serviceEnv: {
      scheduler: { DELIVERY_INTERVAL_MS: "200", UPLOAD_CLEANUP_INTERVAL_MS: "1000", UNCLAIMED_UPLOAD_RETENTION_DAYS: RETENTION_DAYS },
      messaging: (v) => {
        amqpUrl = v.AMQP_URL;
        return { AMQP_URL: messagingAmqp.url(v.AMQP_URL) };
      },
    },
  });
  demo = await runDemo(stack);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await messagingAmqp?.close();
  if (uploadsDir) await rm(uploadsDir, { recursive: true, force: true });
});

const org = () => demo.orgs[0];
const client = (u: DemoUser) => demoClient(demo, u);
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A queue for `eventTypes`, with their state. */
const register = (api: ApiClient, eventTypes: string[]) => registerQueue(api, { event_types: eventTypes, fetch_event_types: eventTypes });

/** The next `count` events of the queue (each checked against our contract and Zulip's schema). */
const nextEvents = (queue: EventQueue, count: number) => waitForEvents(queue, count, { timeoutMs: 8000 });

/** Polls `fn` until it gives something (time is real here: a second or two). */
const waitUntil = <T>(what: string, fn: () => Promise<T | undefined | null | false>) => until(what, fn, { timeoutMs: 8000 });

async function messagesWithContent(api: ApiClient, content: string, narrow: unknown[] = [{ operator: "search", operand: content.split(" ")[0] }]): Promise<any[]> {
  const res = await api.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.messages as any[]).filter((m) => m.content.includes(content));
}

/** Schedules `content` to the public channel's "plans" topic, due in two seconds; its id. */
async function scheduleInPlans(api: ApiClient, content: string): Promise<number> {
  const res = await api.post("/scheduled_messages", {
    type: "stream",
    to: org().channels.public.stream_id,
    topic: "plans",
    content,
    scheduled_delivery_timestamp: nowSeconds() + 2,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.scheduled_message_id;
}

describe("scheduled messages", () => {
  it("schedule -> events -> delivery to the channel -> removed from the list", async () => {
    const member = client(org().users.member);
    const queue = await register(member, ["scheduled_messages"]);
    expect(queue.state.scheduled_messages).toEqual([]);
    const content = `Rendezvous${Date.now()} at noon`;
    const id = await scheduleInPlans(member, content);
    const listed = await member.get("/scheduled_messages");
    expect(listed.body.scheduled_messages).toEqual([expect.objectContaining({ scheduled_message_id: id, type: "stream", topic: "plans", failed: false })]);

    const [added] = await nextEvents(queue, 1);
    expect(added).toMatchObject({ type: "scheduled_messages", op: "add", scheduled_messages: [{ scheduled_message_id: id }] });
    const [removed] = await nextEvents(queue, 1);
    expect(removed).toMatchObject({ type: "scheduled_messages", op: "remove", scheduled_message_id: id });

    const seenBy = client(org().users.member2);
    const delivered = await waitUntil("the message", async () => {
      const found = await messagesWithContent(seenBy, content);
      return found.length ? found : null;
    });
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ sender_id: org().users.member.user_id, subject: "plans" });
    expect((await member.get("/scheduled_messages")).body.scheduled_messages).toEqual([]);
  });

  it("the delivered message's event reaches the sender before the scheduled message's removal, even when messaging publishes late", async () => {
    const member = client(org().users.member);
    const queue = await register(member, ["message", "scheduled_messages"]);
    const content = `Standup${Date.now()} in five`;
    const id = await scheduleInPlans(member, content);
    const [added] = await nextEvents(queue, 1);
    expect(added).toMatchObject({ type: "scheduled_messages", op: "add" });

    // Messaging's events wait in a stalled connection while the message is sent and stored; the
    // scheduler's removal would otherwise overtake the message's event.
    messagingAmqp.pause();
    try {
      await waitUntil("the message stored", async () => (await messagesWithContent(member, content)).length > 0);
      await sleep(300);
    } finally {
      messagingAmqp.resume();
    }
    const events = await nextEvents(queue, 2);
    expect(events.map((e) => `${e.type}/${e.op ?? ""}`)).toEqual(["message/", "scheduled_messages/remove"]);
    expect(events[0].message.content).toContain(content.split(" ")[0]);
    expect(events[1].scheduled_message_id).toBe(id);
  });

  it("edit and delete through the gateway", async () => {
    const member = client(org().users.member);
    const res = await member.post("/scheduled_messages", {
      type: "direct",
      to: [org().users.member2.user_id],
      content: "draft text",
      scheduled_delivery_timestamp: nowSeconds() + 3600,
    });
    const id = res.body.scheduled_message_id;
    expect((await member.patch(`/scheduled_messages/${id}`, { content: "final text" })).body).toEqual({ result: "success", msg: "" });
    expect((await member.get("/scheduled_messages")).body.scheduled_messages[0]).toMatchObject({ content: "final text", to: [org().users.member2.user_id] });
    const other = client(org().users.member2);
    expect((await other.delete(`/scheduled_messages/${id}`)).status).toBe(404);
    expect((await member.delete(`/scheduled_messages/${id}`)).body).toEqual({ result: "success", msg: "" });
    expect((await member.get("/scheduled_messages")).body.scheduled_messages).toEqual([]);
    const bad = await member.post("/scheduled_messages", { type: "stream", to: 999999, topic: "t", content: "x", scheduled_delivery_timestamp: nowSeconds() + 60 });
    expect(bad.body).toEqual({ result: "error", code: "STREAM_DOES_NOT_EXIST", msg: "Channel with ID '999999' does not exist", stream_id: 999999 });
  });

  it("a message the sender may no longer send fails visibly: update event and a notice from the notification bot", async () => {
    const member = client(org().users.member);
    const name = `closed${Date.now()}`;
    expect((await member.post("/users/me/subscriptions", { subscriptions: [{ name }], invite_only: true })).status).toBe(200);
    const streamId = (await member.get("/get_stream_id", { stream: name })).body.stream_id;
    const queue = await register(member, ["scheduled_messages"]);
    const res = await member.post("/scheduled_messages", { type: "stream", to: streamId, topic: "t", content: "too late", scheduled_delivery_timestamp: nowSeconds() + 2 });
    expect(res.status).toBe(200);
    expect((await member.delete("/users/me/subscriptions", { subscriptions: [name] })).status).toBe(200);
    const [, update] = await nextEvents(queue, 2);
    expect(update).toMatchObject({ type: "scheduled_messages", op: "update", scheduled_message: { scheduled_message_id: res.body.scheduled_message_id, failed: true } });
    const notice = await waitUntil("the notice", async () => {
      const found = await messagesWithContent(member, "The message you scheduled for", [{ operator: "is", operand: "dm" }]);
      return found.length ? found[0] : null;
    });
    expect(notice.type).toBe("private");
    expect(notice.sender_email).toMatch(/notification-bot/);
    expect((await member.get("/scheduled_messages")).body.scheduled_messages).toEqual([expect.objectContaining({ failed: true })]);
    expect((await member.delete(`/scheduled_messages/${res.body.scheduled_message_id}`)).status).toBe(200);
  });

  it("a scheduler that was down delivers what came due, once, when it is back", async () => {
    const member = client(org().users.member);
    const contents = [0, 1, 2].map((i) => `Outage${Date.now()} number ${i}`);
    const due = nowSeconds() + 2;
    for (const content of contents) {
      const res = await member.post("/scheduled_messages", { type: "direct", to: [org().users.member2.user_id], content, scheduled_delivery_timestamp: due });
      expect(res.status).toBe(200);
    }
    await stack.kill("scheduler", "SIGKILL");
    // The messages come due while it is down, and nothing sends them.
    await sleep(Math.max(0, due * 1000 - Date.now()) + 300);
    const other = client(org().users.member2);
    for (const content of contents) expect(await messagesWithContent(other, content)).toEqual([]);
    await stack.start("scheduler");
    for (const content of contents) {
      const found = await waitUntil(content, async () => {
        const m = await messagesWithContent(other, content);
        return m.length ? m : null;
      });
      expect(found).toHaveLength(1);
    }
    // The scheduler records a delivery once messaging has published the message's event, a
    // moment after the message can be read.
    await waitUntil("the list emptied", async () => (await member.get("/scheduled_messages")).body.scheduled_messages.length === 0);
  });
});

async function upload(api: DemoUser, name: string, body: string) {
  const form = new FormData();
  form.append("file", new Blob([body], { type: "text/plain" }), name);
  const res = await fetch(`${stack.baseUrl}/api/v1/user_uploads`, {
    method: "POST",
    headers: { authorization: "Basic " + Buffer.from(`${api.email}:${api.api_key}`).toString("base64") },
    body: form,
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { url: string; uri: string; filename: string };
}

describe("uploads", () => {
  it("upload -> reference -> download by the recipient at the root URL -> refused to others -> delete", async () => {
    const { member, member2, moderator } = org().users;
    const queue = await register(client(member), ["attachment"]);
    const up = await upload(member, "agenda.txt", "1. coffee");
    expect(up.filename).toBe("agenda.txt");
    const sent = await client(member).post("/messages", { type: "direct", to: [member2.user_id], content: `[agenda](${up.url})` });
    expect(sent.status).toBe(200);
    const events = await nextEvents(queue, 2);
    expect(events.map((e) => `${e.type}/${e.op}`)).toEqual(["attachment/add", "attachment/update"]);
    expect(events[1].attachment.messages).toEqual([{ id: sent.body.id, date_sent: expect.any(Number) }]);

    const asRecipient = await client(member2).get(up.url);
    expect(asRecipient.status).toBe(200);
    expect(asRecipient.body).toBe("1. coffee");
    expect((await client(moderator).get(up.url)).status).toBe(404);
    expect((await client(demo.orgs[1].users.member).get(up.url)).status).toBe(404);

    const listed = await client(member).get("/attachments");
    const att = listed.body.attachments.find((a: any) => a.path_id === up.url.slice("/user_uploads/".length));
    expect(att).toMatchObject({ name: "agenda.txt", size: 9, messages: [{ id: sent.body.id }] });
    expect((await client(member2).delete(`/attachments/${att.id}`)).body).toMatchObject({ code: "BAD_REQUEST", msg: "Invalid attachment" });
    expect((await client(member).delete(`/attachments/${att.id}`)).body).toEqual({ result: "success", msg: "" });
    expect((await client(member2).get(up.url)).status).toBe(404);
  });

  it("an upload never used in a message is deleted automatically", async () => {
    const { member } = org().users;
    const up = await upload(member, "forgotten.txt", "nobody will link me");
    await waitUntil("the clean-up", async () => (await client(member).get(up.url)).status === 404);
    const listed = await client(member).get("/attachments");
    expect(listed.body.attachments.some((a: any) => a.name === "forgotten.txt")).toBe(false);
  });
});
