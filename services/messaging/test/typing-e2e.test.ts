import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { nextEvent, NO_RATE_LIMITS, ok, register, until, useDemoStack, type EventQueue } from "@chat/testkit/e2e";

/**
 * POST /typing through the whole stack (gateway, messaging, the broker, events) as Zulip
 * clients see it: which queues the typing events reach, in the form Zulip publishes them.
 * Absence is shown by order: a realm's events reach each queue in commit order, so a queue
 * whose next event is a later marker never got the earlier one.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const { as } = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));

/** A queue for typing events; `channelTyping`: the client declares stream_typing_notifications. */
function typingQueue(user: DemoUser, channelTyping = true): Promise<EventQueue> {
  const caps = channelTyping ? { notification_settings_null: true, stream_typing_notifications: true } : { notification_settings_null: true };
  return register(as(user), { event_types: ["typing"], client_capabilities: caps });
}

/** Each user as typing events show them: id and the API email clients know them by. */
const shown = new Map<DemoUser, { user_id: number; email: string }>();
async function who(u: DemoUser) {
  if (!shown.has(u)) shown.set(u, { user_id: u.user_id, email: ok(await as(u).get("/users/me")).email });
  return shown.get(u)!;
}

const startDirect = async (from: DemoUser, to: DemoUser[]) =>
  ok(await as(from).post("/typing", { op: "start", to: to.map((u) => u.user_id) }));

describe("typing events in clients' queues", () => {
  it("direct: the recipients and the sender get it; nobody else, in no other organization", async () => {
    const { member, member2, admin, owner } = org.users;
    const [sender, recipient, bystander, foreign] = await Promise.all([typingQueue(member), typingQueue(member2), typingQueue(admin), typingQueue(org2.users.member)]);
    await startDirect(member, [member2]);
    const expected = { type: "typing", op: "start", message_type: "direct", sender: await who(member), recipients: [await who(member2), await who(member)] };
    expect(await nextEvent(recipient)).toEqual(expected);
    expect(await nextEvent(sender)).toEqual(expected);
    // Later typing that does concern them: it comes first, so the earlier one never came.
    await startDirect(owner, [admin]);
    expect(await nextEvent(bystander)).toMatchObject({ sender: await who(owner) });
    await startDirect(org2.users.owner, [org2.users.member]);
    expect(await nextEvent(foreign)).toMatchObject({ sender: { user_id: org2.users.owner.user_id } });
    ok(await as(member).post("/typing", { op: "stop", to: [member2.user_id] }));
    expect(await nextEvent(recipient)).toEqual({ ...expected, op: "stop" });
  });

  it("channel: the subscribers whose clients take channel typing; not the others", async () => {
    const { member, member2, admin } = org.users;
    const [insider, outsider, modern, legacy] = await Promise.all([typingQueue(admin), typingQueue(member2), typingQueue(member2), typingQueue(member2, false)]);
    // The private channel's subscribers: the owner, admin and member.
    ok(await as(member).post("/typing", { type: "stream", op: "start", stream_id: org.channels.private.stream_id, topic: "plans" }));
    const inPrivate = { type: "typing", op: "start", message_type: "stream", sender: await who(member), stream_id: org.channels.private.stream_id, topic: "plans" };
    expect(await nextEvent(insider)).toEqual(inPrivate);
    ok(await as(member).post("/typing", { type: "channel", op: "start", stream_id: org.channels.public.stream_id, topic: "lunch" }));
    const inPublic = { ...inPrivate, stream_id: org.channels.public.stream_id, topic: "lunch" };
    expect(await nextEvent(outsider)).toEqual(inPublic);
    expect(await nextEvent(modern)).toEqual(inPublic);
    // A client without stream_typing_notifications gets direct typing only.
    await startDirect(member, [member2]);
    expect(await nextEvent(legacy)).toMatchObject({ message_type: "direct", sender: await who(member) });
  });

  it("errors reach the client with Zulip's code and message", async () => {
    const { member, member2 } = org.users;
    const fails = async (params: Record<string, unknown>, code: string, msg: string) => {
      const res = await as(member).post("/typing", params);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ result: "error", code, msg });
    };
    await fails({ to: [member2.user_id] }, "REQUEST_VARIABLE_MISSING", "Missing 'op' argument");
    await fails({ op: "start", to: [] }, "BAD_REQUEST", "Empty 'to' list");
    await fails({ op: "start", to: [org2.users.member.user_id] }, "BAD_REQUEST", `Invalid user ID ${org2.users.member.user_id}`);
    await fails({ type: "stream", op: "start", topic: "t" }, "BAD_REQUEST", "Missing channel ID");
    await fails({ type: "stream", op: "start", stream_id: org2.channels.public.stream_id, topic: "t" }, "BAD_REQUEST", "Invalid channel ID");
  });

  it("a user who turns receiving off gets no typing events; one who turns sending off is refused", async () => {
    const { member, moderator, member2 } = org.users;
    const quiet = await typingQueue(moderator);
    // Two changes, in this order: messaging applies accounts' events in order, so once the
    // second shows (a refusal), the first has been applied too.
    ok(await as(moderator).patch("/settings", { receives_typing_notifications: false }));
    ok(await as(moderator).patch("/settings", { send_private_typing_notifications: false }));
    await until("the refusal", async () => {
      const res = await as(moderator).post("/typing", { op: "start", to: [member2.user_id] });
      if (res.status === 200) return false;
      expect(res.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "User has disabled typing notifications for direct messages" });
      return true;
    });
    await startDirect(member, [moderator]);
    ok(await as(moderator).patch("/settings", { receives_typing_notifications: true }));
    // Typing with member2 too, until moderator hears member again: the first thing heard from
    // member is that (moderator's own typing before the refusal may be there before it).
    let heard: any = null;
    await until("moderator hears member", async () => {
      await startDirect(member, [moderator, member2]);
      do heard = await nextEvent(quiet, { timeoutMs: 300 }).catch(() => null);
      while (heard !== null && heard.sender.user_id !== member.user_id);
      return heard !== null;
    });
    expect(heard.recipients).toEqual([await who(moderator), await who(member2), await who(member)]);
  });
});
