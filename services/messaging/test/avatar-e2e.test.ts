import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createPool } from "@chat/platform";
import type { DemoOrg, DemoUser } from "@chat/testkit";
import { NO_RATE_LIMITS, ok, register, sleep, until, useDemoStack, type EventQueue } from "@chat/testkit/e2e";

/**
 * Message senders' avatar_url as clients see it (GET /messages, GET /messages/{id}, the message
 * event), through the whole stack: uploaded avatars with their version, Gravatars of the
 * delivery email with the avatar version, null only where a client_gravatar client can compute
 * it (a Gravatar of a sender whose email everyone may see). Zulip's MessageDict.set_sender_avatar.
 */

let org: DemoOrg;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org] = demo.orgs));
const { as } = e2e;

const PNG_1X1 = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" + "1f15c4890000000d4944415478da63f8cfc0f01f0005000201ab0f9e" + "0b0000000049454e44ae426082",
  "hex",
);
const md5 = (email: string) => createHash("md5").update(email.trim().toLowerCase()).digest("hex");
const gravatarOf = (email: string, version: number) => `https://secure.gravatar.com/avatar/${md5(email)}?d=identicon&version=${version}`;

async function uploadAvatar(u: DemoUser): Promise<string> {
  const res = await e2e.postFile(u, "/users/me/avatar", { name: "me.png", type: "image/png", data: PNG_1X1 });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.avatar_url;
}

/** Two queues of `u` for message events: client_gravatar as Zulip defaults it (true), and false. */
async function messageQueues(u: DemoUser): Promise<{ computed: EventQueue; given: EventQueue }> {
  const open = (clientGravatar: boolean) => register(as(u), { event_types: ["message"], client_gravatar: clientGravatar });
  return { computed: await open(true), given: await open(false) };
}

/**
 * The event of message `id` in the queue. Only that one: the event of a message sent just before
 * the queue was registered may still be on its way then, and reach the queue first (or be counted
 * in the register's state, which moves the queue's start past it: hence register's last_event_id).
 */
async function nextMessageEvent(u: DemoUser, queue: EventQueue, id: number): Promise<any> {
  const deadline = Date.now() + 8000;
  for (;;) {
    const { events } = ok(await as(u).get("/events", { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true }));
    const found = events.find((e: any) => e.type === "message" && e.message.id === id);
    if (found) return found;
    if (Date.now() > deadline) throw new Error("no message event");
    await sleep(50);
  }
}

/** A message's avatar_url as `viewer` reads it with GET /messages. */
async function fetchedAvatar(viewer: DemoUser, id: number, clientGravatar: boolean): Promise<string | null> {
  const { messages } = ok(await as(viewer).get("/messages", { anchor: id, num_before: 0, num_after: 0, client_gravatar: clientGravatar }));
  expect(messages.map((m: any) => m.id)).toEqual([id]);
  return messages[0].avatar_url;
}

/** Messaging learns of avatar and visibility changes through accounts' events: wait until it has. */
const caughtUp = (check: () => Promise<boolean>) => until("messaging's replica to catch up", check);

async function dm(from: DemoUser, to: DemoUser, content: string): Promise<number> {
  return ok(await as(from).post("/messages", { type: "direct", to: [to.user_id], content })).id;
}

describe("message senders' avatar_url", () => {
  it("an uploaded avatar: its URL with the new version, whatever client_gravatar says", async () => {
    const { member, member2 } = org.users;
    const before = await dm(member, member2, "before the upload");
    expect(await fetchedAvatar(member2, before, false)).toBe(gravatarOf(member.email, 1));

    const url = await uploadAvatar(member);
    expect(url).toMatch(/^\/user_avatars\/\d+\/[A-Za-z0-9]+\.png\?version=2$/);
    await caughtUp(async () => (await fetchedAvatar(member2, before, true)) === url);
    expect(await fetchedAvatar(member2, before, false)).toBe(url);

    const queues = await messageQueues(member2);
    const id = await dm(member, member2, "after the upload");
    for (const queue of [queues.computed, queues.given]) {
      const event = await nextMessageEvent(member2, queue, id);
      expect(event.message).toMatchObject({ id, sender_id: member.user_id, avatar_url: url });
      expect(event).not.toHaveProperty("sender_avatar_url");
    }
    const single = ok(await as(member2).get(`/messages/${id}`));
    expect(single.message.avatar_url).toBe(url);

    // Back to Gravatar: the version moves on again.
    ok(await as(member).delete("/users/me/avatar"));
    await caughtUp(async () => (await fetchedAvatar(member2, id, false)) === gravatarOf(member.email, 3));
    expect(await fetchedAvatar(member2, id, true)).toBeNull();
  });

  it("a Gravatar sender whose email everyone may see: null with client_gravatar, the URL without", async () => {
    const { owner, member2 } = org.users;
    const queues = await messageQueues(member2);
    const id = await dm(owner, member2, "visible email");
    expect((await nextMessageEvent(member2, queues.computed, id)).message).toMatchObject({ id, avatar_url: null });
    const given = await nextMessageEvent(member2, queues.given, id);
    expect(given.message).toMatchObject({ id, avatar_url: gravatarOf(owner.email, 1) });
    expect(given).not.toHaveProperty("sender_avatar_url");
    expect(await fetchedAvatar(member2, id, true)).toBeNull();
    expect(await fetchedAvatar(member2, id, false)).toBe(gravatarOf(owner.email, 1));
    // GET /messages/{id} has no client_gravatar: Zulip answers it as if it were on.
    expect(ok(await as(member2).get(`/messages/${id}`)).message.avatar_url).toBeNull();
  });

  it("a Gravatar sender whose email is hidden: the URL of the real address even with client_gravatar, and the address never", async () => {
    const { moderator, member } = org.users;
    ok(await as(moderator).patch("/settings", { email_address_visibility: 4 }));
    try {
      const expected = gravatarOf(moderator.email, 1);
      const old = await dm(moderator, member, "sent while visible?");
      await caughtUp(async () => (await fetchedAvatar(member, old, true)) === expected);

      const queues = await messageQueues(member);
      const id = await dm(moderator, member, "hidden email");
      for (const queue of [queues.computed, queues.given]) {
        const event = await nextMessageEvent(member, queue, id);
        expect(event.message).toMatchObject({ id, avatar_url: expected, sender_email: expect.stringMatching(/\.invalid$/) });
        // A client hashing the dummy API email would show someone else's picture.
        expect(event.message.avatar_url).not.toContain(md5(event.message.sender_email));
        expect(JSON.stringify(event)).not.toContain(moderator.email);
      }
      const { messages } = ok(await as(member).get("/messages", { anchor: id, num_before: 0, num_after: 0 }));
      expect(messages[0].avatar_url).toBe(expected);
      expect(JSON.stringify(messages)).not.toContain(moderator.email);
    } finally {
      ok(await as(moderator).patch("/settings", { email_address_visibility: 1 }));
    }
    // Public again: client_gravatar clients compute it.
    const id = await dm(moderator, member, "visible again");
    await caughtUp(async () => (await fetchedAvatar(member, id, true)) === null);
  });

  it("a replica row from before avatars were replicated is read again from accounts", async () => {
    const { admin, member } = org.users;
    const url = await uploadAvatar(admin);
    const id = await dm(admin, member, "uploaded");
    await caughtUp(async () => (await fetchedAvatar(member, id, true)) === url);
    const pool = createPool(e2e.stack.vars.DATABASE_URL, "messaging", 1);
    try {
      // As the migration leaves existing rows (and a previous release's pods write them).
      await pool.query(
        "UPDATE users SET avatar_source = 'G', avatar_version = 1, avatar_token = NULL, email_public = NULL, avatar_synced_at = NULL WHERE user_id = $1",
        [admin.user_id],
      );
      expect(await fetchedAvatar(member, id, true)).toBe(url);
      const { rows } = await pool.query("SELECT avatar_source, email_public FROM users WHERE user_id = $1", [admin.user_id]);
      expect(rows[0]).toEqual({ avatar_source: "U", email_public: true });
    } finally {
      await pool.end();
    }
  });
});
