import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoClient, runDemo, startStack, type ApiClient, type DemoOutput, type DemoUser, type Stack } from "@chat/testkit";
import { applyEvent, type ApplyContext } from "../../events/src/lib/apply/index";
import { contractEventErrors, openapiAvailable, zulipEventErrors } from "@chat/testkit/openapi";

/**
 * Muted users through the whole stack (gateway, accounts, messaging, events), as a Zulip client
 * sees them: the answers, the events in the muting user's queue (each checked against our
 * contract and Zulip's schema, applied to the registered state and compared with a fresh
 * register), and messages from the muted user read for them and unread for others.
 */

let stack: Stack;
let demo: DemoOutput;
let org: DemoOutput["orgs"][0];
let channel: number;
const clients = new Map<DemoUser, ApiClient>();
const as = (u: DemoUser) => clients.get(u) ?? clients.set(u, demoClient(demo, u)).get(u)!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  stack = await startStack({ serviceEnv: { gateway: { RATE_LIMITING_ENABLED: "false" } } });
  demo = await runDemo(stack);
  org = demo.orgs[0];
  const { owner, member, member2 } = org.users;
  ok(await as(owner).post("/users/me/subscriptions", { subscriptions: [{ name: "mute-test" }], principals: [owner.user_id, member.user_id, member2.user_id] }));
  channel = ok(await as(owner).get("/get_stream_id", { stream: "mute-test" })).stream_id;
}, 180_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

function ok(res: { status: number; body: any }) {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.result).toBe("success");
  return res.body;
}

function expectError(res: { status: number; body: any }, msg: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg });
}

const TYPES = ["muted_users", "message", "update_message_flags"];
const PARAMS = { event_types: TYPES, fetch_event_types: TYPES, client_capabilities: { notification_settings_null: true } };

async function register(u: DemoUser) {
  return ok(await as(u).post("/register", PARAMS)) as Record<string, any>;
}

const comparable = ({ queue_id: _q, last_event_id: _l, result: _r, msg: _m, ...rest }: Record<string, any>) => rest;

/**
 * Zulip's verify_action: register, act, collect the events (checked against both schemas), apply
 * them to the state and compare with a fresh register, until they agree (delivery crosses
 * services) or the time is up. Returns the events.
 */
async function verifyAction(u: DemoUser, action: () => Promise<unknown>, settle: (events: any[]) => boolean = () => true) {
  const state = await register(u);
  const ctx: ApplyContext = { userId: u.user_id, fetchTypes: TYPES, includeSubscribers: false, clientGravatar: true };
  let last: number = state.last_event_id;
  const events: any[] = [];
  await action();
  const drain = async () => {
    const res = ok(await as(u).get("/events", { queue_id: state.queue_id, last_event_id: last, dont_block: true }));
    for (const e of res.events) {
      last = e.id;
      if (e.type === "heartbeat") continue;
      expect(contractEventErrors(e), `contract: ${JSON.stringify(e)}`).toEqual([]);
      if (openapiAvailable) expect(zulipEventErrors(e), `Zulip schema: ${JSON.stringify(e)}`).toEqual([]);
      events.push(e);
      expect(applyEvent(state, e, ctx), `could not apply ${JSON.stringify(e)}`).toBe(true);
    }
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    await drain();
    const fresh = await register(u);
    await as(u).delete("/events", { queue_id: fresh.queue_id });
    const same = settle(events) && isDeepStrictEqual(comparable(state), comparable(fresh));
    if (same || Date.now() > deadline) {
      if (same) {
        await sleep(300);
        await drain();
      }
      expect(comparable(state)).toEqual(comparable(fresh));
      break;
    }
    await sleep(150);
  }
  await as(u).delete("/events", { queue_id: state.queue_id });
  return events.map(({ id: _id, ...e }) => e);
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
    const dm = await send(member2, { type: "private", to: [member.user_id], content: "hi" });
    const inChannel = await send(member2, { type: "stream", to: channel, topic: "t", content: "hello" });

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
    const elsewhere = demo.orgs[1].users.member;
    expectError(await as(member).post(`/users/me/muted_users/${member.user_id}`), "Cannot mute self");
    expectError(await as(member).post(`/users/me/muted_users/${member2.user_id}`), "User already muted");
    expectError(await as(member).post(`/users/me/muted_users/${elsewhere.user_id}`), "No such user");
    expectError(await as(member).delete(`/users/me/muted_users/${owner.user_id}`), "User is not muted");
    expectError(await as(member).delete(`/users/me/muted_users/${elsewhere.user_id}`), "No such user");
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
