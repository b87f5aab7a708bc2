import { describe, expect, it } from "vitest";
import type { DemoOrg } from "@chat/testkit";
import { ok, register as registerQueue, sleep, useDemoStack, type EventQueue } from "@chat/testkit/e2e";

/**
 * Message edits and moves end to end, as a Zulip client sees them: PATCH through the gateway,
 * then the events in registered queues (update_message with the reader's flags and both content
 * forms; delete_message for readers a move takes the messages from, split or bulk by capability).
 */

let org: DemoOrg;
const e2e = useDemoStack({}, async ({ demo }) => {
  [org] = demo.orgs;
  const { owner, member, member2, guest } = org.users;
  ok(await as("owner").post("/users/me/subscriptions", { subscriptions: [{ name: "edits" }], principals: [owner, member, member2, guest].map((u) => u.user_id) }));
  ok(await as("owner").post("/users/me/subscriptions", { subscriptions: [{ name: "edits-private" }], principals: [owner.user_id, member.user_id], invite_only: true }));
});
type Who = keyof DemoOrg["users"];
const as = (who: Who) => e2e.as(org.users[who]);

const register = (who: Who, params: Record<string, unknown> = {}) => registerQueue(as(who), { event_types: ["update_message", "delete_message", "message"], ...params });

/**
 * The queue's events once `done` holds for them (polling without blocking). The tests pick their
 * events by type: a message sent just before a queue is registered may still reach it.
 */
async function eventsUntil(who: Who, q: EventQueue, done: (events: any[]) => boolean): Promise<any[]> {
  let events: any[] = [];
  for (let i = 0; i < 60 && !done(events); i++) {
    const res = ok(await as(who).get("/events", { queue_id: q.queue_id, last_event_id: q.last_event_id, dont_block: true }));
    events = res.events;
    if (!done(events)) await sleep(100);
  }
  return events;
}

describe("PATCH /messages/{id} through the gateway", () => {
  it("a content edit reaches each reader's queue with their flags, Markdown in content and HTML in rendered_content", async () => {
    const sent = ok(await as("member").post("/messages", { type: "stream", to: "edits", topic: "e2e", content: "draft" }));
    const q = await register("member2", { apply_markdown: false });
    ok(await as("member").patch(`/messages/${sent.id}`, { content: `hi @**${org.users.member2.full_name}**` }));
    const ev = (await eventsUntil("member2", q, (es) => es.some((e) => e.type === "update_message"))).find((e) => e.type === "update_message");
    expect(ev).toMatchObject({
      type: "update_message",
      message_id: sent.id,
      message_ids: [sent.id],
      user_id: org.users.member.user_id,
      orig_content: "draft",
      content: `hi @**${org.users.member2.full_name}**`,
      rendering_only: false,
      flags: ["mentioned"],
    });
    expect(ev.rendered_content).toContain('class="user-mention"');
    expect(ev.markdown_content).toBeUndefined();
    const history = ok(await as("member2").get(`/messages/${sent.id}/history`));
    expect(history.message_history.map((h: any) => h.content)).toEqual(["draft", `hi @**${org.users.member2.full_name}**`]);
  });

  it("a move to a private channel is a deletion for readers who cannot follow, one event per message without bulk_message_deletion", async () => {
    const a = ok(await as("member").post("/messages", { type: "stream", to: "edits", topic: "moving", content: "one" }));
    const b = ok(await as("member").post("/messages", { type: "stream", to: "edits", topic: "moving", content: "two" }));
    const bulk = await register("member2", { client_capabilities: { notification_settings_null: false, bulk_message_deletion: true } });
    const split = await register("guest");
    const stays = await register("member");
    const priv = ok(await as("owner").get("/get_stream_id", { stream: "edits-private" }));
    ok(await as("owner").patch(`/messages/${a.id}`, { stream_id: priv.stream_id, propagate_mode: "change_all", send_notification_to_new_thread: false }));
    const gone = (await eventsUntil("member2", bulk, (es) => es.some((e) => e.type === "delete_message"))).find((e) => e.type === "delete_message");
    expect(gone).toMatchObject({ type: "delete_message", message_type: "stream", message_ids: [a.id, b.id], topic: "moving" });
    const split2 = await eventsUntil("guest", split, (es) => es.filter((e) => e.type === "delete_message").length === 2);
    expect(split2.filter((e) => e.type === "delete_message").map((e) => e.message_id)).toEqual([a.id, b.id]);
    const moved = (await eventsUntil("member", stays, (es) => es.some((e) => e.type === "update_message"))).find((e) => e.type === "update_message");
    expect(moved).toMatchObject({ message_ids: [a.id, b.id], new_stream_id: priv.stream_id, orig_subject: "moving", propagate_mode: "change_all", flags: [] });
    expect((await as("member2").get(`/messages/${a.id}`)).body.code).toBe("BAD_REQUEST");
  });
});
