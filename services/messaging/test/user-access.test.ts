import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMessaging, type Messaging, type Org } from "./helpers";

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
