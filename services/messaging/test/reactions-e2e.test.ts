import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoClient, runDemo, startStack, type DemoOrg, type DemoOrg2, type DemoOutput, type DemoUser, type Stack } from "@chat/testkit";
import { contractEventErrors, openapiAvailable, zulipEventErrors } from "@chat/testkit/openapi";
import { encodePng } from "../src/lib/image";

/**
 * Reactions and custom emoji through the whole stack (gateway, messaging, the broker, events), as
 * a Zulip client such as zulip-js uses them: which queues the reaction and realm_emoji events
 * reach, reactions in GET /messages, the emoji image at its source_url, register's realm_emoji.
 * Absence is shown by order: a realm's events reach each queue in commit order, so a queue whose
 * next event is a later marker never got the earlier one.
 */

let stack: Stack;
let demo: DemoOutput;
let org: DemoOrg;
let org2: DemoOrg2;
const as = (u: DemoUser) => demoClient(demo, u);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  stack = await startStack({ serviceEnv: { gateway: { RATE_LIMITING_ENABLED: "false" } } });
  demo = await runDemo(stack);
  [org, org2] = demo.orgs;
}, 180_000);
afterAll(async () => stack?.stop(), 60_000);

async function ok(p: Promise<{ status: number; body: any }>): Promise<any> {
  const res = await p;
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toMatchObject({ result: "success", msg: "" });
  return res.body;
}

interface Queue {
  user: DemoUser;
  id: string;
  last: number;
}

async function queue(user: DemoUser, types: string[]): Promise<Queue> {
  const body = await ok(as(user).post("/register", { event_types: types }));
  return { user, id: body.queue_id, last: body.last_event_id };
}

/** The queue's next event, checked against our contract and Zulip's schema (less the legacy `user` of reactions). */
async function nextEvent(q: Queue, waitMs = 10_000): Promise<any> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { events } = await ok(as(q.user).get("/events", { queue_id: q.id, last_event_id: q.last, dont_block: true }));
    const event = events.find((e: any) => e.type !== "heartbeat");
    if (event) {
      q.last = event.id;
      expect(contractEventErrors(event), JSON.stringify(event)).toEqual([]);
      const { user: _legacy, ...modern } = event;
      if (openapiAvailable) expect(zulipEventErrors(event.type === "reaction" ? modern : event), JSON.stringify(event)).toEqual([]);
      const { id: _id, ...rest } = event;
      return rest;
    }
    if (Date.now() > deadline) throw new Error(`no event for ${q.user.email}`);
    await sleep(50);
  }
}

const apiEmail = async (u: DemoUser) => (await ok(as(u).get("/users/me"))).email as string;
const send = async (from: DemoUser, params: Record<string, unknown>) => (await ok(as(from).post("/messages", params))).id as number;

describe("reactions in clients' queues", () => {
  it("a direct message: both participants hear of it, nobody else, in no other organization; GET /messages shows it", async () => {
    const { member, member2, admin, owner } = org.users;
    const id = await send(member, { type: "direct", to: JSON.stringify([member2.user_id]), content: "lunch?" });
    const [mine, theirs, bystander, foreign] = await Promise.all([
      queue(member, ["reaction"]),
      queue(member2, ["reaction"]),
      queue(admin, ["reaction"]),
      queue(org2.users.member, ["reaction"]),
    ]);
    await ok(as(member2).post(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" }));
    const expected = {
      type: "reaction",
      op: "add",
      user_id: member2.user_id,
      user: { user_id: member2.user_id, email: await apiEmail(member2), full_name: member2.full_name },
      message_id: id,
      emoji_name: "thumbs_up",
      emoji_code: "1f44d",
      reaction_type: "unicode_emoji",
    };
    expect(await nextEvent(mine)).toEqual(expected);
    expect(await nextEvent(theirs)).toEqual(expected);

    // Markers: a reaction the bystander and the other organization's user do hear of comes first.
    const adminDm = await send(owner, { type: "direct", to: JSON.stringify([admin.user_id]), content: "hi" });
    await ok(as(owner).post(`/messages/${adminDm}/reactions`, { emoji_name: "wave" }));
    expect(await nextEvent(bystander)).toMatchObject({ message_id: adminDm, emoji_name: "wave" });
    const foreignId = await send(org2.users.owner, { type: "direct", to: JSON.stringify([org2.users.member.user_id]), content: "hi" });
    await ok(as(org2.users.owner).post(`/messages/${foreignId}/reactions`, { emoji_name: "wave" }));
    expect(await nextEvent(foreign)).toMatchObject({ message_id: foreignId });

    const { message } = await ok(as(member).get(`/messages/${id}`));
    expect(message.reactions).toEqual([
      { emoji_name: "thumbs_up", emoji_code: "1f44d", reaction_type: "unicode_emoji", user_id: member2.user_id, user: { id: member2.user_id, email: expected.user.email, full_name: member2.full_name, is_mirror_dummy: false } },
    ]);
    const { messages } = await ok(as(member2).get("/messages", { anchor: id, num_before: 0, num_after: 0 }));
    expect(messages[0].reactions).toEqual(message.reactions);

    // Removal as zulip-js sends it: the parameters in the query string of the DELETE.
    await ok(as(member2).delete(`/messages/${id}/reactions?emoji_name=thumbs_up`));
    expect(await nextEvent(mine)).toEqual({ ...expected, op: "remove" });
    expect((await ok(as(member).get(`/messages/${id}`))).message.reactions).toEqual([]);
  });

  it("a private channel: its subscribers hear of it, another member does not; errors reach the client as Zulip's", async () => {
    const { member, member2, admin } = org.users;
    const id = await send(admin, { type: "stream", to: String(org.channels.private.stream_id), topic: "plans", content: "ship it" });
    const [insider, outsider] = await Promise.all([queue(member, ["reaction"]), queue(member2, ["reaction"])]);
    await ok(as(member).post(`/messages/${id}/reactions`, { emoji_name: "tada" }));
    expect(await nextEvent(insider)).toMatchObject({ op: "add", message_id: id, emoji_name: "tada", emoji_code: "1f389" });
    const fails = async (p: Promise<{ status: number; body: any }>, code: string, msg: string) => {
      const res = await p;
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ result: "error", code, msg });
    };
    await fails(as(member).post(`/messages/${id}/reactions`, { emoji_name: "tada" }), "REACTION_ALREADY_EXISTS", "Reaction already exists.");
    await fails(as(member2).post(`/messages/${id}/reactions`, { emoji_name: "tada" }), "BAD_REQUEST", "Invalid message(s)");
    await fails(as(org2.users.member).post(`/messages/${id}/reactions`, { emoji_name: "tada" }), "BAD_REQUEST", "Invalid message(s)");
    await fails(as(member).delete(`/messages/${id}/reactions?emoji_name=octopus`), "REACTION_DOES_NOT_EXIST", "Reaction doesn't exist.");
    // The outsider's next reaction event is a later one in the public channel.
    const open = await send(admin, { type: "stream", to: String(org.channels.public.stream_id), topic: "hello", content: "hi all" });
    await ok(as(member).post(`/messages/${open}/reactions`, { emoji_name: "wave" }));
    expect(await nextEvent(outsider)).toMatchObject({ message_id: open, emoji_name: "wave" });
  });
});

describe("custom emoji through the gateway", () => {
  /** A 2x1 PNG (red, green), as a client uploads it: multipart through the gateway. */
  const png = encodePng(2, 1, new Uint8Array([255, 0, 0, 255, 0, 255, 0, 255]));
  async function uploadEmoji(u: DemoUser, name: string) {
    const form = new FormData();
    form.append("filename", new Blob([new Uint8Array(png)], { type: "image/png" }), "emoji.png");
    const auth = "Basic " + Buffer.from(`${u.email}:${u.api_key}`).toString("base64");
    const res = await fetch(`${demo.base_url}/api/v1/realm/emoji/${name}`, { method: "POST", headers: { authorization: auth }, body: form });
    return { status: res.status, body: await res.json() };
  }
  async function image(u: DemoUser, path: string) {
    const auth = "Basic " + Buffer.from(`${u.email}:${u.api_key}`).toString("base64");
    const res = await fetch(`${demo.base_url}${path}`, { headers: { authorization: auth } });
    return { status: res.status, body: Buffer.from(await res.arrayBuffer()), type: res.headers.get("content-type") };
  }

  it("an upload reaches everyone's queue in the organization; the image is served at source_url; register lists it; reactions use it", async () => {
    const { member, member2, guest } = org.users;
    const [q1, q2, qGuest, qForeign] = await Promise.all([
      queue(member2, ["realm_emoji", "reaction"]),
      queue(guest, ["realm_emoji"]),
      queue(member, ["realm_emoji"]),
      queue(org2.users.member, ["realm_emoji"]),
    ]);
    await ok(uploadEmoji(member, "party_parrot"));
    const { emoji } = await ok(as(member2).get("/realm/emoji"));
    const [id] = Object.keys(emoji);
    expect(emoji[id]).toEqual({
      id,
      name: "party_parrot",
      source_url: expect.stringMatching(new RegExp(`^/user_avatars/${org.id}/emoji/images/${id}-[\\w-]{16}\\.png$`)),
      still_url: null,
      deactivated: false,
      author_id: member.user_id,
    });
    for (const q of [q1, q2, qGuest]) expect(await nextEvent(q)).toEqual({ type: "realm_emoji", op: "update", realm_emoji: emoji });

    // The other organization's user next hears of their own organization's emoji only.
    await ok(uploadEmoji(org2.users.owner, "their_own"));
    const theirs = await nextEvent(qForeign);
    expect(Object.values(theirs.realm_emoji).map((e: any) => e.name)).toEqual(["their_own"]);

    // Served at the root without credentials, as an image tag in message HTML asks for it.
    const served = await fetch(`${demo.base_url}${emoji[id].source_url}`);
    expect([served.status, served.headers.get("content-type"), Buffer.from(await served.arrayBuffer()).equals(png)]).toEqual([200, "image/png", true]);
    expect((await image(guest, `/user_avatars/${org.id}/emoji/images/${id}.png`)).status).toBe(404);

    const state = await ok(as(member2).post("/register", { fetch_event_types: JSON.stringify(["realm_emoji"]), event_types: JSON.stringify(["realm_emoji"]) }));
    expect(state.realm_emoji).toEqual(emoji);

    const dm = await send(member, { type: "direct", to: JSON.stringify([member2.user_id]), content: "look" });
    await ok(as(member).post(`/messages/${dm}/reactions`, { emoji_name: "party_parrot" }));
    expect(await nextEvent(q1)).toMatchObject({ type: "reaction", op: "add", emoji_name: "party_parrot", emoji_code: id, reaction_type: "realm_emoji" });

    // Deactivation: the whole dictionary again, the emoji marked deactivated.
    await ok(as(member).delete("/realm/emoji/party_parrot"));
    expect((await nextEvent(q2)).realm_emoji[id]).toMatchObject({ name: "party_parrot", deactivated: true });
    const res = await as(member).delete("/realm/emoji/party_parrot");
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Emoji 'party_parrot' does not exist" });
  });
});
