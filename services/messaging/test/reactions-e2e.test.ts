import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { nextEvent, NO_RATE_LIMITS, ok, register, useDemoStack, type EventQueue } from "@chat/testkit/e2e";
import { encodePng } from "../src/lib/image";

/**
 * Reactions and custom emoji through the whole stack (gateway, messaging, the broker, events), as
 * a Zulip client such as zulip-js uses them: which queues the reaction and realm_emoji events
 * reach, reactions in GET /messages, the emoji image at its source_url, register's realm_emoji.
 * Absence is shown by order: a realm's events reach each queue in commit order, so a queue whose
 * next event is a later marker never got the earlier one.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));
const { as } = e2e;

/** Zulip's schema is asked about reactions without their legacy `user` (gone after our feature level). */
function withoutLegacyUser(e: Record<string, any>) {
  if (e.type !== "reaction") return e;
  const { user: _legacy, ...modern } = e;
  return modern;
}
const queue = async (user: DemoUser, types: string[]): Promise<EventQueue> => ({ ...(await register(as(user), { event_types: types })), zulipForm: withoutLegacyUser });

const apiEmail = async (u: DemoUser) => ok(await as(u).get("/users/me")).email as string;
const send = async (from: DemoUser, params: Record<string, unknown>) => ok(await as(from).post("/messages", params)).id as number;

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
    ok(await as(member2).post(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" }));
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
    ok(await as(owner).post(`/messages/${adminDm}/reactions`, { emoji_name: "wave" }));
    expect(await nextEvent(bystander)).toMatchObject({ message_id: adminDm, emoji_name: "wave" });
    const foreignId = await send(org2.users.owner, { type: "direct", to: JSON.stringify([org2.users.member.user_id]), content: "hi" });
    ok(await as(org2.users.owner).post(`/messages/${foreignId}/reactions`, { emoji_name: "wave" }));
    expect(await nextEvent(foreign)).toMatchObject({ message_id: foreignId });

    const { message } = ok(await as(member).get(`/messages/${id}`));
    expect(message.reactions).toEqual([
      { emoji_name: "thumbs_up", emoji_code: "1f44d", reaction_type: "unicode_emoji", user_id: member2.user_id, user: { id: member2.user_id, email: expected.user.email, full_name: member2.full_name, is_mirror_dummy: false } },
    ]);
    const { messages } = ok(await as(member2).get("/messages", { anchor: id, num_before: 0, num_after: 0 }));
    expect(messages[0].reactions).toEqual(message.reactions);

    // Removal as zulip-js sends it: the parameters in the query string of the DELETE.
    ok(await as(member2).delete(`/messages/${id}/reactions?emoji_name=thumbs_up`));
    expect(await nextEvent(mine)).toEqual({ ...expected, op: "remove" });
    expect(ok(await as(member).get(`/messages/${id}`)).message.reactions).toEqual([]);
  });

  it("a private channel: its subscribers hear of it, another member does not; errors reach the client as Zulip's", async () => {
    const { member, member2, admin } = org.users;
    const id = await send(admin, { type: "stream", to: String(org.channels.private.stream_id), topic: "plans", content: "ship it" });
    const [insider, outsider] = await Promise.all([queue(member, ["reaction"]), queue(member2, ["reaction"])]);
    ok(await as(member).post(`/messages/${id}/reactions`, { emoji_name: "tada" }));
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
    ok(await as(member).post(`/messages/${open}/reactions`, { emoji_name: "wave" }));
    expect(await nextEvent(outsider)).toMatchObject({ message_id: open, emoji_name: "wave" });
  });
});

describe("custom emoji through the gateway", () => {
  /** A 2x1 PNG (red, green), as a client uploads it: multipart through the gateway. */
  const png = encodePng(2, 1, new Uint8Array([255, 0, 0, 255, 0, 255, 0, 255]));
  const uploadEmoji = (u: DemoUser, name: string) => e2e.postFile(u, `/realm/emoji/${name}`, { field: "filename", name: "emoji.png", type: "image/png", data: png });
  async function image(u: DemoUser, path: string) {
    const auth = "Basic " + Buffer.from(`${u.email}:${u.api_key}`).toString("base64");
    const res = await fetch(`${e2e.demo.base_url}${path}`, { headers: { authorization: auth } });
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
    ok(await uploadEmoji(member, "party_parrot"));
    const { emoji } = ok(await as(member2).get("/realm/emoji"));
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
    ok(await uploadEmoji(org2.users.owner, "their_own"));
    const theirs = await nextEvent(qForeign);
    expect(Object.values(theirs.realm_emoji).map((e: any) => e.name)).toEqual(["their_own"]);

    // Served at the root without credentials, as an image tag in message HTML asks for it.
    const served = await fetch(`${e2e.demo.base_url}${emoji[id].source_url}`);
    expect([served.status, served.headers.get("content-type"), Buffer.from(await served.arrayBuffer()).equals(png)]).toEqual([200, "image/png", true]);
    expect((await image(guest, `/user_avatars/${org.id}/emoji/images/${id}.png`)).status).toBe(404);

    const state = ok(await as(member2).post("/register", { fetch_event_types: JSON.stringify(["realm_emoji"]), event_types: JSON.stringify(["realm_emoji"]) }));
    expect(state.realm_emoji).toEqual(emoji);

    const dm = await send(member, { type: "direct", to: JSON.stringify([member2.user_id]), content: "look" });
    ok(await as(member).post(`/messages/${dm}/reactions`, { emoji_name: "party_parrot" }));
    expect(await nextEvent(q1)).toMatchObject({ type: "reaction", op: "add", emoji_name: "party_parrot", emoji_code: id, reaction_type: "realm_emoji" });

    // Deactivation: the whole dictionary again, the emoji marked deactivated.
    ok(await as(member).delete("/realm/emoji/party_parrot"));
    expect((await nextEvent(q2)).realm_emoji[id]).toMatchObject({ name: "party_parrot", deactivated: true });
    const res = await as(member).delete("/realm/emoji/party_parrot");
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Emoji 'party_parrot' does not exist" });
  });
});
