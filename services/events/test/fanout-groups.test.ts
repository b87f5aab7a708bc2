import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, eventsEnv, notice, queueFor, user, type EventsEnv, type Instance } from "./support";

/**
 * The fan-out shapes one copy per group of queues registered alike whose users got the same
 * flags. One notice to many queues that differ in one way each: every queue still gets exactly
 * the copy its own registration and flags call for.
 */

let ev: EventsEnv;
let inst: Instance;

beforeAll(async () => {
  ev = await eventsEnv();
  inst = await ev.start();
});
afterAll(async () => {
  await ev.teardown();
});

describe("fan-out groups", () => {
  it("gives each queue its own form among many alike", async () => {
    const sender = user();
    const plain = [user(), user(), user()];
    const mentioned = user();
    const people = [...plain, mentioned];
    // Two alike queues per plain user, plus one of each kind that differs from them.
    const alike = await Promise.all(plain.flatMap((u) => [queueFor(inst, u), queueFor(inst, u)]).map(async (q, i) => ({ who: plain[Math.floor(i / 2)], q: await q })));
    const markdown = { who: plain[0], q: await queueFor(inst, plain[0], { apply_markdown: true }) };
    const gravatar = { who: plain[1], q: await queueFor(inst, plain[1], { client_gravatar: false }) };
    const otherTypes = { who: plain[2], q: await queueFor(inst, plain[2], { event_types: ["stream"] }) };
    const narrowed = { who: plain[2], q: await queueFor(inst, plain[2], { narrow: [["stream", "Elsewhere"]] }) };
    const theirs = { who: mentioned, q: await queueFor(inst, mentioned) };
    const named = { who: sender, q: await queueFor(inst, sender) };
    const senderOther = { who: sender, q: await queueFor(inst, sender) };

    const m = {
      type: "message",
      message: {
        id: 5001,
        sender_id: sender.userId,
        sender_email: sender.email,
        sender_full_name: "Sender",
        type: "stream",
        display_recipient: "Denmark",
        stream_id: 7,
        subject: "castle",
        content: "<p><strong>hi</strong></p>",
        content_type: "text/html",
        avatar_url: null,
      },
      markdown_content: "**hi**",
    };
    await ev.publish(
      "test.notice.sent",
      1,
      notice(m, [{ id: sender.userId, flags: ["read"] }, ...plain.map((u) => ({ id: u.userId, flags: [] })), { id: mentioned.userId, flags: ["mentioned"] }], {
        sender_queue: { queue_id: named.q, local_id: "9.5" },
      }),
    );
    // A marker every queue accepts (stream events pass the narrow), to show who skipped the message.
    await ev.publish("test.notice.sent", 1, notice({ type: "stream", op: "update", stream_id: 1, name: "x", property: "description", value: "" }, [sender, ...people].map((u) => u.userId)));

    const first = async (x: { who: ReturnType<typeof user>; q: string }) => (await collect(inst, x.who, x.q, 1)).events[0];
    for (const x of alike) {
      const e = await first(x);
      expect(e).toMatchObject({ type: "message", flags: [], message: { content: "**hi**", content_type: "text/x-markdown", avatar_url: null } });
      expect("local_id" in e).toBe(false);
    }
    expect(await first(markdown)).toMatchObject({ flags: [], message: { content: "<p><strong>hi</strong></p>", content_type: "text/html" } });
    expect((await first(gravatar)).message.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\//);
    expect(await first(otherTypes)).toMatchObject({ type: "stream" });
    expect(await first(narrowed)).toMatchObject({ type: "stream" });
    expect(await first(theirs)).toMatchObject({ type: "message", flags: ["mentioned"] });
    expect(await first(named)).toMatchObject({ type: "message", flags: ["read"], local_id: "9.5", local_message_id: "9.5" });
    const own = await first(senderOther);
    expect(own).toMatchObject({ type: "message", flags: ["read"] });
    expect("local_id" in own).toBe(false);
  });
});
