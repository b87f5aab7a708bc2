import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selectConversationPartners } from "../src/store/user-access";
import { expectError, startMessaging, userWithId, type Messaging, type Org } from "./helpers";

/**
 * Messaging's part of limited user access (the organization's can_access_all_users_group, kept
 * by accounts): whom a user shares a channel or a conversation with (accounts asks), which
 * guests gain or lose access to users when subscriptions change, and what a guest sees of a
 * message whose sender they do not access.
 */

let m: Messaging;
let org: Org;
let other: Org;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
});
afterAll(async () => {
  await m?.close();
});

const partners = async (realmId: number, userId: number) =>
  (await m.ok(await m.call("GET", "/internal/subscriptions/conversation_partners", null, { realm_id: realmId, user_id: userId }))).user_ids as number[];
const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
const limit = (o: Org, on: boolean) => m.setRealmSetting(o.realmId, "can_access_all_users_group", on ? "role:members" : "role:everyone");
const accessChanges = async () => (await m.outbox()).filter((e) => e.type === "messaging.user_access.changed").map((e) => ({ gained: e.payload.gained, lost: e.payload.lost }));

describe("limited user access", () => {
  let room: number;

  beforeAll(async () => {
    room = await m.createStream(org.admin, "room", [org.admin, org.guest, org.member]);
    await m.send(org.moderator, { type: "private", to: JSON.stringify([org.guest.user_id]), content: "hi" });
    await limit(org, true);
  });

  it("conversation partners: channel subscribers and direct message partners, both ways, in the organization asked about", async () => {
    expect(await partners(org.realmId, org.guest.user_id)).toEqual(sorted([org.admin.user_id, org.guest.user_id, org.member.user_id, org.moderator.user_id]));
    expect(await partners(org.realmId, org.moderator.user_id)).toEqual(sorted([org.guest.user_id, org.moderator.user_id]));
    expect(await partners(org.realmId, org.member2.user_id)).toEqual([]);
    expect(await partners(other.realmId, org.guest.user_id)).toEqual([]);
  });

  it("subscriptions: the guests of the channel and a subscribed guest gain and lose users (bots left out)", async () => {
    await m.outbox();
    await m.ok(await m.call("POST", "/users/me/subscriptions", org.admin, { subscriptions: JSON.stringify([{ name: "room" }]), principals: JSON.stringify([org.member2.user_id, org.bot.user_id]) }));
    expect(await accessChanges()).toEqual([{ gained: [{ user_id: org.guest.user_id, user_ids: [org.member2.user_id] }], lost: [] }]);
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.admin, { subscriptions: JSON.stringify(["room"]), principals: JSON.stringify([org.member2.user_id, org.bot.user_id]) }));
    expect(await accessChanges()).toEqual([{ gained: [], lost: [{ user_id: org.guest.user_id, user_ids: [org.member2.user_id] }] }]);
    // The guest joins a channel of the owner's; someone they already access changes nothing.
    const lobby = await m.createStream(org.owner, "lobby", [org.owner, org.member]);
    await m.outbox();
    await m.ok(await m.call("POST", "/users/me/subscriptions", org.admin, { subscriptions: JSON.stringify([{ name: "lobby" }]), principals: JSON.stringify([org.guest.user_id]) }));
    expect(await accessChanges()).toEqual([{ gained: [{ user_id: org.guest.user_id, user_ids: [org.owner.user_id] }], lost: [] }]);
    // Deleting the channel ends its subscriptions: the owner is lost again.
    await m.ok(await m.call("DELETE", `/streams/${lobby}`, org.admin));
    expect(await accessChanges()).toEqual([{ gained: [], lost: [{ user_id: org.guest.user_id, user_ids: [org.owner.user_id] }] }]);
  });

  it("nothing of the kind where the organization does not limit guests", async () => {
    await limit(org, false);
    await m.outbox();
    await m.ok(await m.call("POST", "/users/me/subscriptions", org.admin, { subscriptions: JSON.stringify([{ name: "room" }]), principals: JSON.stringify([org.member2.user_id]) }));
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.admin, { subscriptions: JSON.stringify(["room"]), principals: JSON.stringify([org.member2.user_id]) }));
    expect(await accessChanges()).toEqual([]);
    await limit(org, true);
  });

  it("a message by someone the guest does not access: its event and history show Zulip's stand-in to the guest only", async () => {
    await m.outbox();
    // member2 posts in the public channel without being subscribed to it.
    const id = await m.send(org.member2, { type: "stream", to: "room", topic: "t", content: "drive-by" });
    const sent = await m.outbox();
    const main = sent.find((e) => e.type === "messaging.message.sent")!;
    expect(main.payload.user_ids).toContain(org.guest.user_id);
    expect(main.payload.client.users.map((u: any) => u.id)).not.toContain(org.guest.user_id);
    expect(main.payload.client.event.message.sender_full_name).toBe("Max Member");
    const hidden = sent.find((e) => e.type === "messaging.message.sender_hidden")!;
    expect(hidden.payload.client.users).toEqual([{ id: org.guest.user_id, flags: [] }]);
    const stand = { sender_full_name: "Unknown user", sender_email: `user${org.member2.user_id}@${org.slug}.invalid`, avatar_url: "/static/images/unknown-user-avatar.png" };
    expect(hidden.payload.client.event.message).toMatchObject({ id, sender_id: org.member2.user_id, content: "<p>drive-by</p>", ...stand });
    expect(JSON.stringify(hidden.payload.client.event)).not.toContain("Max Member");

    const history = async (who: Org["guest"]) =>
      (await m.ok(await m.call("GET", "/messages", who, { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([]) }))).messages.find((x: any) => x.id === id);
    expect(await history(org.guest)).toMatchObject(stand);
    expect((await m.ok(await m.call("GET", `/messages/${id}`, org.guest))).message).toMatchObject(stand);
    expect(await history(org.member)).toMatchObject({ sender_full_name: "Max Member", sender_email: org.member2.email });
    // Senders the guest accesses keep their names.
    const own = await m.send(org.member, { type: "stream", to: "room", topic: "t", content: "inside" });
    expect((await m.outbox()).map((e) => e.type)).not.toContain("messaging.message.sender_hidden");
    expect((await m.ok(await m.call("GET", `/messages/${own}`, org.guest))).message.sender_full_name).toBe("Mel Member");
    // Where guests are not limited, the guest sees the name too.
    await limit(org, false);
    expect(await history(org.guest)).toMatchObject({ sender_full_name: "Max Member" });
    await m.send(org.member2, { type: "stream", to: "room", topic: "t", content: "again" });
    expect((await m.outbox()).map((e) => e.type)).not.toContain("messaging.message.sender_hidden");
    await limit(org, true);
  });

  it("channel typing by someone the guest does not access is not sent to the guest; by someone it accesses, it is", async () => {
    const typingTo = async (who: Org["member"]) => {
      await m.outbox();
      await m.ok(await m.call("POST", "/typing", who, { type: "channel", op: "start", stream_id: room, topic: "t" }));
      const sent = (await m.outbox()).filter((e) => e.type === "messaging.typing.started");
      expect(sent).toHaveLength(1);
      return sorted(sent[0].payload.client.users);
    };
    // member2 is not subscribed to the public channel and shares nothing with the guest.
    expect(await typingTo(org.member2)).toEqual(sorted([org.admin.user_id, org.member.user_id]));
    expect(await typingTo(org.member)).toEqual(sorted([org.admin.user_id, org.guest.user_id, org.member.user_id]));
    await limit(org, false);
    expect(await typingTo(org.member2)).toEqual(sorted([org.admin.user_id, org.guest.user_id, org.member.user_id]));
    await limit(org, true);
  });

  it("direct typing by someone the guest does not access (no message yet) is not sent to the guest; the sender succeeds and the others are told", async () => {
    const typingTo = async (who: Org["member"], to: Array<Org["member"]>) => {
      await m.outbox();
      await m.ok(await m.call("POST", "/typing", who, { type: "direct", op: "start", to: JSON.stringify(to.map((u) => u.user_id)) }));
      const sent = (await m.outbox()).filter((e) => e.type === "messaging.typing.started");
      expect(sent.length).toBeGreaterThan(0);
      // Every copy still names every participant: the conversation is the same for all of them.
      for (const e of sent) expect(sorted(e.payload.client.event.recipients.map((r: any) => r.user_id))).toEqual(sorted([who, ...to].map((u) => u.user_id)));
      return sorted(sent.flatMap((e) => e.payload.client.users));
    };
    // member2 shares nothing with the guest; the moderator shares a conversation with it.
    expect(await typingTo(org.member2, [org.guest])).toEqual([org.member2.user_id]);
    expect(await typingTo(org.member2, [org.guest, org.member])).toEqual(sorted([org.member.user_id, org.member2.user_id]));
    await m.ok(await m.call("POST", "/typing", org.member2, { type: "direct", op: "stop", to: JSON.stringify([org.guest.user_id]) }));
    expect((await m.outbox()).filter((e) => e.type === "messaging.typing.stopped").map((e) => e.payload.client.users)).toEqual([[org.member2.user_id]]);
    expect(await typingTo(org.moderator, [org.guest])).toEqual(sorted([org.guest.user_id, org.moderator.user_id]));
    // The guest typing to member2 reaches member2, who accesses everyone (as in Zulip, typing is
    // not refused where the message itself would be).
    expect(await typingTo(org.guest, [org.member2])).toEqual(sorted([org.guest.user_id, org.member2.user_id]));
    expect(await typingTo(org.guest, [org.moderator])).toEqual(sorted([org.guest.user_id, org.moderator.user_id]));
    // Where guests are not limited, the guest is told.
    await limit(org, false);
    expect(await typingTo(org.member2, [org.guest])).toEqual(sorted([org.guest.user_id, org.member2.user_id]));
    expect(await typingTo(org.guest, [org.member2])).toEqual(sorted([org.guest.user_id, org.member2.user_id]));
    await limit(org, true);
  });

  it("direct typing told to a guest who does not access some other participant: in the guest's copy those are the stand-in", async () => {
    // The guest accesses the member (the channel "room") and no one else here; guest2 has a
    // conversation with the member and one with the first stranger, so it misses the guest
    // and the second stranger.
    const guest2 = await org.extra(71, 600);
    const [known, unknown] = [await org.extra(73), await org.extra(74)];
    await m.send(org.member, { type: "private", to: JSON.stringify([guest2.user_id]), content: "hi" });
    await m.send(known, { type: "private", to: JSON.stringify([guest2.user_id]), content: "hello" });
    const participants = [org.member, org.guest, guest2, known, unknown, org.bot];
    const stand = (u: { user_id: number }) => ({ user_id: u.user_id, email: `user${u.user_id}@${org.slug}.invalid` });
    const real = (u: { user_id: number; email: string }) => ({ user_id: u.user_id, email: u.email });
    const to = JSON.stringify([org.guest, guest2, known, unknown, org.bot].map((u) => u.user_id));
    /** Each copy of the typing event sent: its receivers and its recipients (in the order the sender's ids give). */
    const copies = async (op: "start" | "stop") => {
      await m.outbox();
      await m.ok(await m.call("POST", "/typing", org.member, { type: "direct", op, to }));
      const sent = (await m.outbox()).filter((e) => e.type === (op === "start" ? "messaging.typing.started" : "messaging.typing.stopped"));
      for (const e of sent) expect(e.payload.client.event.sender).toEqual(real(org.member));
      return new Map(sent.map((e) => [JSON.stringify(sorted(e.payload.client.users)), sortedById(e.payload.client.event.recipients)]));
    };
    const sortedById = (list: Array<{ user_id: number }>) => [...list].sort((a, b) => a.user_id - b.user_id);
    const others = JSON.stringify(sorted(participants.filter((u) => u !== org.guest && u !== guest2).map((u) => u.user_id)));
    const expected = new Map([
      [others, sortedById(participants.map(real))],
      [JSON.stringify([org.guest.user_id]), sortedById([real(org.member), real(org.guest), stand(guest2), stand(known), stand(unknown), real(org.bot)])],
      [JSON.stringify([guest2.user_id]), sortedById([real(org.member), stand(org.guest), real(guest2), real(known), stand(unknown), real(org.bot)])],
    ]);
    for (const op of ["start", "stop"] as const) {
      const got = await copies(op);
      expect(got).toEqual(expected);
      const guestCopy = JSON.stringify(got.get(JSON.stringify([org.guest.user_id])));
      expect(guestCopy).not.toContain(known.email);
      expect(guestCopy).not.toContain(guest2.email);
      expect(guestCopy).not.toContain(unknown.email);
    }
    // Once the conversation has a message, every participant shares it: one copy, the real emails.
    await m.send(org.member, { type: "private", to, content: "all of us" });
    expect(await copies("start")).toEqual(new Map([[JSON.stringify(sorted(participants.map((u) => u.user_id))), sortedById(participants.map(real))]]));
  });

  it("where guests are not limited, a guest's copy of direct typing names everyone", async () => {
    const guest3 = await org.extra(72, 600);
    await limit(org, false);
    await m.outbox();
    await m.ok(await m.call("POST", "/typing", org.member, { type: "direct", op: "start", to: JSON.stringify([guest3.user_id, org.owner.user_id]) }));
    const sent = (await m.outbox()).filter((e) => e.type === "messaging.typing.started");
    await limit(org, true);
    expect(sent).toHaveLength(1);
    expect(sorted(sent[0].payload.client.users)).toEqual(sorted([guest3.user_id, org.member.user_id, org.owner.user_id]));
    expect(sent[0].payload.client.event.recipients.map((r: any) => r.email).sort()).toEqual([guest3.email, org.member.email, org.owner.email].sort());
  });

  it("a guest may not send a direct message to a user it does not access; nothing is stored or sent", async () => {
    // The guest shares the channel "room" with the admin and the member, and a conversation with
    // the moderator; member2 and the owner it does not access (no conversation with them yet).
    const refused = "You do not have permission to access some of the recipients.";
    const stranger = await org.extra(75);
    const attempts: Array<Record<string, unknown>> = [
      { type: "direct", to: JSON.stringify([stranger.user_id]) },
      { type: "private", to: JSON.stringify([stranger.user_id]) },
      { type: "direct", to: JSON.stringify([stranger.email]) },
      { type: "private", to: stranger.email },
      // A group conversation with one user it does not access among ones it does.
      { type: "direct", to: JSON.stringify([org.member.user_id, stranger.user_id]) },
      { type: "direct", to: JSON.stringify([org.bot.user_id, org.moderator.user_id, stranger.user_id]) },
    ];
    await m.outbox();
    const messages = await m.count("messages");
    const recipients = await m.count("recipients");
    for (const params of attempts) {
      expectError(await m.call("POST", "/messages", org.guest, { ...params, content: "hello?" }), 400, "BAD_REQUEST", refused);
      // The scheduler's check of a scheduled message refuses it the same way.
      expectError(await m.call("POST", "/internal/messages/check", org.guest, { ...params, content: "later" }), 400, "BAD_REQUEST", refused);
    }
    // Even where the user is deactivated: the guest is not told their email.
    // (Deactivated while guests are not limited: accounts then asks messaging nothing.)
    await limit(org, false);
    await m.deactivate(stranger);
    await limit(org, true);
    const gone = await m.call("POST", "/messages", org.guest, { type: "direct", to: JSON.stringify([stranger.user_id]), content: "hello?" });
    expectError(gone, 400, "BAD_REQUEST", refused);
    expect(await m.count("messages")).toBe(messages);
    expect(await m.count("recipients")).toBe(recipients);
    expect(await m.outbox()).toEqual([]);
  });

  it("a guest may write to the users it accesses: a conversation it has, a channel it shares, bots and itself", async () => {
    const ids = [
      // The moderator started a conversation with the guest: the guest may reply.
      await m.send(org.guest, { type: "private", to: JSON.stringify([org.moderator.user_id]), content: "thanks" }),
      await m.send(org.guest, { type: "direct", to: JSON.stringify([org.member.email]), content: "we share a channel" }),
      await m.send(org.guest, { type: "direct", to: JSON.stringify([org.member.user_id, org.admin.user_id, org.bot.user_id]), content: "group" }),
      await m.send(org.guest, { type: "direct", to: JSON.stringify([org.bot.user_id]), content: "a bot" }),
      await m.send(org.guest, { type: "direct", to: JSON.stringify([org.guest.user_id]), content: "a note to self" }),
    ];
    expect(new Set(ids).size).toBe(5);
    await m.ok(await m.call("POST", "/internal/messages/check", org.guest, { type: "direct", to: JSON.stringify([org.moderator.user_id]), content: "later" }));
  });

  it("a conversation someone else starts with the guest makes them accessible; where guests are not limited, anyone is", async () => {
    const stranger = await org.extra(76);
    const write = () => m.call("POST", "/messages", org.guest, { type: "direct", to: JSON.stringify([stranger.user_id]), content: "hi" });
    expectError(await write(), 400, "BAD_REQUEST", "You do not have permission to access some of the recipients.");
    await limit(org, false);
    await m.ok(await write());
    await limit(org, true);
    // That message shared a conversation with them: the guest accesses them from now on.
    await m.ok(await write());
    const other = await org.extra(77);
    await m.send(other, { type: "direct", to: JSON.stringify([org.guest.user_id]), content: "hello guest" });
    await m.ok(await m.call("POST", "/messages", org.guest, { type: "direct", to: JSON.stringify([other.user_id]), content: "hello back" }));
  });

  it("the limit is on guests only: a member writes to anyone", async () => {
    const stranger = await org.extra(78);
    await m.ok(await m.call("POST", "/messages", org.member2, { type: "direct", to: JSON.stringify([stranger.user_id]), content: "hi" }));
  });

  it("a direct conversation's first message: the guest gains its other participants; later ones change nothing", async () => {
    await m.outbox();
    await m.send(org.owner, { type: "private", to: JSON.stringify([org.guest.user_id, org.member2.user_id]), content: "welcome" });
    expect(await accessChanges()).toEqual([{ gained: [{ user_id: org.guest.user_id, user_ids: sorted([org.owner.user_id, org.member2.user_id]) }], lost: [] }]);
    await m.send(org.owner, { type: "private", to: JSON.stringify([org.guest.user_id, org.member2.user_id]), content: "again" });
    expect(await accessChanges()).toEqual([]);
    // Now that they share a conversation, member2's channel messages show their name to the guest.
    await m.send(org.member2, { type: "stream", to: "room", topic: "t", content: "known now" });
    expect((await m.outbox()).map((e) => e.type)).not.toContain("messaging.message.sender_hidden");
  });
});

describe("conversation partners read by the participants index", () => {
  /** What the statement answered before the index (a pattern over every conversation of the organization), per user. */
  async function byPattern(realmId: number, userId: number): Promise<number[]> {
    const { rows } = await m.deps.pool.query(
      `SELECT theirs.user_id AS other
         FROM subscriptions mine JOIN subscriptions theirs ON theirs.stream_id = mine.stream_id AND theirs.active
        WHERE mine.realm_id = $1 AND mine.user_id = $2 AND mine.active
       UNION
       SELECT unnest(string_to_array(r.user_ids_key, ',')::bigint[])
         FROM recipients r
        WHERE r.realm_id = $1 AND r.user_ids_key IS NOT NULL AND (',' || r.user_ids_key || ',') LIKE ('%,' || $2 || ',%')`,
      [realmId, userId],
    );
    return sorted(rows.map((r) => Number(r.other)));
  }

  it("answers as the pattern did: ids that are part of others', group and self conversations, several users at once, one organization only", async () => {
    const o = await m.createOrg();
    const a = o.member2;
    const n = String(a.user_id);
    // Users whose ids hold a's digits at their start, end and middle.
    const starts = await userWithId(m, o, (d) => d !== n && d.startsWith(n));
    const ends = await userWithId(m, o, (d) => d !== n && d.endsWith(n));
    const inside = await userWithId(m, o, (d) => d.includes(n) && !d.startsWith(n) && !d.endsWith(n));
    await m.send(a, { type: "private", to: JSON.stringify([starts.user_id]), content: "one" });
    await m.send(ends, { type: "private", to: JSON.stringify([inside.user_id]), content: "two" });
    await m.send(o.member, { type: "private", to: JSON.stringify([starts.user_id, ends.user_id, o.bot.user_id]), content: "group" });
    await m.send(o.moderator, { type: "private", to: JSON.stringify([o.moderator.user_id]), content: "self" });
    await m.createStream(o.admin, "partners", [o.admin, inside]);
    // The other organization's conversations never count here, nor this one's there.
    await m.send(other.member, { type: "private", to: JSON.stringify([other.guest.user_id]), content: "elsewhere" });
    const people = [o.owner, o.admin, o.moderator, o.member, a, o.guest, o.bot, starts, ends, inside];

    for (const u of people) expect(await partners(o.realmId, u.user_id), `user ${u.user_id}`).toEqual(await byPattern(o.realmId, u.user_id));
    expect(await partners(o.realmId, a.user_id)).toEqual(sorted([a.user_id, starts.user_id]));
    expect(await partners(o.realmId, ends.user_id)).toEqual(sorted([o.member.user_id, o.bot.user_id, starts.user_id, ends.user_id, inside.user_id]));
    expect(await partners(o.realmId, inside.user_id)).toEqual(sorted([o.admin.user_id, ends.user_id, inside.user_id]));
    expect(await partners(o.realmId, o.moderator.user_id)).toEqual([o.moderator.user_id]);
    expect(await partners(o.realmId, other.guest.user_id)).toEqual([]);
    expect(await partners(other.realmId, other.guest.user_id)).toEqual(await byPattern(other.realmId, other.guest.user_id));
    expect(await partners(other.realmId, other.guest.user_id)).toContain(other.member.user_id);

    // Asked for many users at once (a subscription change's guests), each answer is the same as asked alone.
    const all = await selectConversationPartners(m.deps.pool, o.realmId, people.map((u) => u.user_id));
    for (const u of people) expect(sorted([...all.get(u.user_id)!])).toEqual(await byPattern(o.realmId, u.user_id));
  });
});
