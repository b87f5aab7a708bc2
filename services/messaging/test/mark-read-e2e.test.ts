import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { nextEvent, NO_RATE_LIMITS, ok, register, useDemoStack, type EventQueue } from "@chat/testkit/e2e";

/**
 * The mark-as-read endpoints, GET /messages/matches_narrow and read receipts through the whole
 * stack (gateway, messaging, the broker, events), as a Zulip client sees them: the answers, the
 * update_message_flags events in the user's queues, and a fresh register agreeing with them.
 * Absence is shown by order: a realm's events reach each queue in commit order, so a queue whose
 * next event is a later marker never got the earlier one.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const { as } = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));

/** A user's queue for flag changes, and the user, whose own later events serve as markers. */
type FlagsQueue = EventQueue & { user: DemoUser };
const flagsQueue = async (user: DemoUser): Promise<FlagsQueue> => ({ ...(await register(as(user), { event_types: ["update_message_flags"] })), user });

/** A later event of the user's own, to show by order that nothing came before it. */
async function marker(q: FlagsQueue): Promise<void> {
  const id = await send(q.user, { type: "direct", to: [q.user.user_id], content: "marker" });
  ok(await as(q.user).post("/messages/flags", { messages: [id], op: "add", flag: "starred" }));
  expect(await nextEvent(q)).toMatchObject({ type: "update_message_flags", flag: "starred", messages: [id] });
}

/** The user's unread message ids as a fresh register's unread_msgs lists them. */
async function registeredUnread(user: DemoUser): Promise<number[]> {
  const body = ok(await as(user).post("/register", { event_types: ["message", "update_message_flags"] }));
  const u = body.unread_msgs;
  return [...u.streams, ...u.pms, ...u.huddles].flatMap((c: { unread_message_ids: number[] }) => c.unread_message_ids).sort((a: number, b: number) => a - b);
}

const send = async (from: DemoUser, params: Record<string, unknown>) => ok(await as(from).post("/messages", params)).id as number;
const readEvent = (messages: number[], all = false) => ({ type: "update_message_flags", op: "add", operation: "add", flag: "read", messages, all });

describe("marking as read through the stack", () => {
  it("topic, then channel: the reader's queues get the ids; the sender, others and another organization get nothing", async () => {
    const { owner, member, member2 } = org.users;
    const pub = org.channels.public;
    const [reader, readerOther, bystander, foreign] = await Promise.all([flagsQueue(member), flagsQueue(member), flagsQueue(member2), flagsQueue(org2.users.member)]);
    const a = await send(owner, { type: "stream", to: pub.stream_id, topic: "e2e read", content: "one" });
    const b = await send(owner, { type: "stream", to: pub.stream_id, topic: "E2E Read", content: "two" });
    const c = await send(owner, { type: "stream", to: pub.stream_id, topic: "elsewhere", content: "three" });

    expect(ok(await as(member).post("/mark_topic_as_read", { stream_id: pub.stream_id, topic_name: "e2e read" }))).toEqual({ result: "success", msg: "" });
    expect(await nextEvent(reader)).toEqual(readEvent([a, b]));
    expect(await nextEvent(readerOther)).toEqual(readEvent([a, b]));
    const unread = await registeredUnread(member);
    expect(unread).toContain(c);
    expect(unread).not.toContain(a);

    ok(await as(member).post("/mark_stream_as_read", { stream_id: pub.stream_id }));
    const event = await nextEvent(reader);
    expect(event).toEqual(readEvent(event.messages));
    expect(event.messages).toContain(c);
    expect(await registeredUnread(member)).not.toContain(c);

    await marker(bystander);
    await marker(foreign);
    expect(await registeredUnread(member2)).toEqual(expect.arrayContaining([a, b, c]));
  });

  it("all: the event says all with no ids, and a fresh register has nothing unread", async () => {
    const { owner, member, member2 } = org.users;
    const [reader, bystander] = await Promise.all([flagsQueue(member), flagsQueue(member2)]);
    await send(owner, { type: "stream", to: org.channels.private.stream_id, topic: "all", content: "x" });
    await send(member2, { type: "direct", to: [member.user_id], content: "y" });
    expect(await registeredUnread(member)).not.toEqual([]);

    expect(ok(await as(member).post("/mark_all_as_read"))).toEqual({ result: "success", msg: "", complete: true });
    expect(await nextEvent(reader)).toEqual(readEvent([], true));
    expect(await registeredUnread(member)).toEqual([]);
    await marker(bystander);
  });

  it("Zulip's errors come through the gateway", async () => {
    const res = await as(org.users.member2).post("/mark_stream_as_read", { stream_id: org.channels.private.stream_id });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Invalid channel ID", code: "BAD_REQUEST" });
  });
});

describe("message questions through the gateway", () => {
  it("matches_narrow is routed as its own path, not as a message id", async () => {
    const { owner, member } = org.users;
    const id = await send(owner, { type: "stream", to: org.channels.public.stream_id, topic: "search", content: "a zebra crossing" });
    const res = ok(await as(member).get("/messages/matches_narrow", { msg_ids: [id], narrow: [{ operator: "search", operand: "zebra" }] }));
    expect(res.messages).toEqual({ [id]: { match_content: '<p>a <span class="highlight">zebra</span> crossing</p>', match_subject: "search" } });
  });

  it("read receipts answer as the organization's setting says (off: accounts keeps none yet)", async () => {
    const id = await send(org.users.owner, { type: "stream", to: org.channels.public.stream_id, topic: "receipts", content: "seen?" });
    const res = await as(org.users.member).get(`/messages/${id}/read_receipts`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Read receipts are disabled in this organization.", code: "BAD_REQUEST" });
    const hidden = await as(org2.users.member).get(`/messages/${id}/read_receipts`);
    expect(hidden.body).toEqual({ result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" });
  });
});
