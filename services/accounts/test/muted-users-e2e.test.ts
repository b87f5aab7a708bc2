import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { NO_RATE_LIMITS, ok, refused, register as registerQueue, useDemoStack, verifyAction as verify, waitForEvents, withoutId } from "@chat/testkit/e2e";
import { applyEvent, type ApplyContext } from "../../events/src/lib/apply/index";

/**
 * Muted users through the whole stack (gateway, accounts, messaging, events), as a Zulip client
 * sees them: the answers, the events in the muting user's queue (each checked against our
 * contract and Zulip's schema, applied to the registered state and compared with a fresh
 * register), and messages from the muted user read for them and unread for others.
 */

let org: DemoOrg;
let org2: DemoOrg2;
let channel: number;
const { as } = useDemoStack(NO_RATE_LIMITS, async ({ demo }) => {
  [org, org2] = demo.orgs;
  const { owner, member, member2 } = org.users;
  // The notification bot's first messages in the channels are read: states without the
  // subscriptions (muting) cannot recount unread channel messages. Its messages are committed
  // before the answer but reach the queues later; the flags event, committed after them, arrives
  // after them, so once it is here none of them can reach the first test's queue as well.
  await afterDelivery(member, "update_message_flags", 1, async () => {
    ok(await as(owner).post("/users/me/subscriptions", { subscriptions: [{ name: "mute-test" }], principals: [owner.user_id, member.user_id, member2.user_id] }));
    ok(await as(member).post("/mark_all_as_read"));
  });
  channel = ok(await as(owner).get("/get_stream_id", { stream: "mute-test" })).stream_id;
});

const TYPES = ["muted_users", "message", "update_message_flags"];
const PARAMS = { event_types: TYPES, fetch_event_types: TYPES, client_capabilities: { notification_settings_null: true } };

/** A fresh register's state. */
const register = async (u: DemoUser) => (await registerQueue(as(u), PARAMS)).state;

/**
 * Zulip's verify_action (events checked against both schemas), until the events satisfy
 * `settle` and the states agree, or the time is up. Returns the events without their ids.
 */
async function verifyAction(u: DemoUser, action: () => Promise<unknown>, settle: (events: any[]) => boolean = () => true) {
  const ctx: ApplyContext = { userId: u.user_id, fetchTypes: TYPES, includeSubscribers: false, clientGravatar: true };
  const events = await verify(action, { register: () => registerQueue(as(u), PARAMS), apply: (state, e) => applyEvent(state, e, ctx), settle, timeoutMs: 15_000 });
  return events.map(withoutId);
}

/** Runs `action` and waits until `count` events of `type` it caused reached a queue of the user. */
async function afterDelivery(u: DemoUser, type: string, count: number, action: () => Promise<unknown>) {
  const q = await registerQueue(as(u), { event_types: [type] });
  await action();
  await waitForEvents(q, count);
  await as(u).delete("/events", { queue_id: q.queue_id });
}

/** A user's flags on messages, as GET /messages shows them. */
async function flags(u: DemoUser, ids: number[]) {
  const res = ok(await as(u).get("/messages", { anchor: "newest", num_before: 100, num_after: 0 }));
  const byId = new Map<number, string[]>(res.messages.map((m: any) => [m.id, m.flags]));
  return ids.map((id) => byId.get(id));
}

const unreadIds = (u: any): number[] =>
  [...u.streams, ...u.pms, ...u.huddles].flatMap((b: any) => b.unread_message_ids).sort((a: number, b: number) => a - b);

describe("muted users through the gateway", () => {
  const send = async (from: DemoUser, params: Record<string, unknown>) => ok(await as(from).post("/messages", params)).id as number;

  it("muting: an empty success, muted_users in the user's queue, and the muted user's messages read", async () => {
    const { member, member2 } = org.users;
    let dm = 0;
    let inChannel = 0;
    await afterDelivery(member, "message", 2, async () => {
      dm = await send(member2, { type: "private", to: [member.user_id], content: "hi" });
      inChannel = await send(member2, { type: "stream", to: channel, topic: "t", content: "hello" });
    });

    let answer: any;
    const events = await verifyAction(
      member,
      async () => (answer = await as(member).post(`/users/me/muted_users/${member2.user_id}`)),
      (got) => got.some((e) => e.type === "update_message_flags"),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ result: "success", msg: "" });
    const muted = events.find((e) => e.type === "muted_users");
    expect(muted).toEqual({ type: "muted_users", muted_users: [{ id: member2.user_id, timestamp: expect.any(Number) }] });
    expect(Math.abs(muted.muted_users[0].timestamp - Date.now() / 1000)).toBeLessThan(60);
    expect(events.filter((e) => e.type === "update_message_flags")).toEqual([
      { type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [dm, inChannel], all: false },
    ]);
    expect(events).toHaveLength(2);

    const state = await register(member);
    expect(state.muted_users).toEqual(muted.muted_users);
    expect(unreadIds(state.unread_msgs)).not.toContain(dm);
    expect(await flags(member, [dm, inChannel])).toEqual([["read"], ["read"]]);
  });

  it("a new message from the muted user arrives read for the muting user and unread for others", async () => {
    const { owner, member, member2 } = org.users;
    let id = 0;
    const events = await verifyAction(member, async () => (id = await send(member2, { type: "stream", to: channel, topic: "t", content: `@**${member.full_name}** ping` })));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "message", message: { id, sender_id: member2.user_id } });
    expect(events[0].flags).toEqual(["read", "mentioned"]);

    const memberState = await register(member);
    expect(unreadIds(memberState.unread_msgs)).not.toContain(id);
    expect(memberState.unread_msgs.mentions).not.toContain(id);
    const ownerState = await register(owner);
    expect(unreadIds(ownerState.unread_msgs)).toContain(id);
    expect(await flags(member, [id])).toEqual([["read", "mentioned"]]);
    expect(await flags(owner, [id])).toEqual([[]]);
  });

  it("refuses with Zulip's messages", async () => {
    const { member, member2, owner } = org.users;
    const elsewhere = org2.users.member;
    refused(await as(member).post(`/users/me/muted_users/${member.user_id}`), "Cannot mute self");
    refused(await as(member).post(`/users/me/muted_users/${member2.user_id}`), "User already muted");
    refused(await as(member).post(`/users/me/muted_users/${elsewhere.user_id}`), "No such user");
    refused(await as(member).delete(`/users/me/muted_users/${owner.user_id}`), "User is not muted");
    refused(await as(member).delete(`/users/me/muted_users/${elsewhere.user_id}`), "No such user");
  });

  it("unmuting sends the shorter list and changes no message; later messages are unread again", async () => {
    const { member, member2 } = org.users;
    const events = await verifyAction(member, async () => ok(await as(member).delete(`/users/me/muted_users/${member2.user_id}`)));
    expect(events).toEqual([{ type: "muted_users", muted_users: [] }]);

    let id = 0;
    const next = await verifyAction(member, async () => (id = await send(member2, { type: "private", to: [member.user_id], content: "back" })));
    expect(next[0].flags).toEqual([]);
    expect(unreadIds((await register(member)).unread_msgs)).toContain(id);
  });
});
