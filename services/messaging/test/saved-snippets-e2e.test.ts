import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2 } from "@chat/testkit";
import { drain, NO_RATE_LIMITS, ok, register, sleep, useDemoStack, waitForEvents } from "@chat/testkit/e2e";

/**
 * Saved snippets through the whole stack (gateway, messaging, events), as a Zulip client calls
 * them: the saved_snippets events reach every queue of their owner and nobody else's, in the
 * organization or outside it; register serves the stored snippets.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const { as } = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));

describe("saved snippets through the gateway", () => {
  it("events reach each of the owner's queues and no one else's; register and GET serve the snippets", async () => {
    const { member, member2, admin } = org.users;
    const ONLY = { event_types: ["saved_snippets"], fetch_event_types: ["saved_snippets"] };
    const first = await register(as(member), ONLY);
    const second = await register(as(member), ONLY);
    const colleague = await register(as(member2), ONLY);
    const administrator = await register(as(admin), ONLY);
    const outsider = await register(as(org2.users.member), ONLY);
    expect(first.state.saved_snippets).toEqual([]);

    const { saved_snippet_id: id } = ok(await as(member).post("/saved_snippets", { title: " Greeting ", content: "Welcome to the organization." }));
    const snippet = { id, title: "Greeting", content: "Welcome to the organization.", date_created: expect.any(Number) };
    for (const q of [first, second]) {
      const [event, ...rest] = await waitForEvents(q, 1);
      expect(rest).toEqual([]);
      expect(event).toEqual({ id: expect.any(Number), type: "saved_snippets", op: "add", saved_snippet: snippet });
    }
    const listed = ok(await as(member).get("/saved_snippets")).saved_snippets;
    expect(listed).toEqual([snippet]);
    expect(Math.abs(listed[0].date_created - Date.now() / 1000)).toBeLessThan(60);
    expect((await register(as(member), { fetch_event_types: ["saved_snippets"] })).state.saved_snippets).toEqual(listed);
    expect(ok(await as(member2).get("/saved_snippets")).saved_snippets).toEqual([]);

    // Someone else cannot delete it, and is told it does not exist.
    const refused = await as(member2).delete(`/saved_snippets/${id}`);
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Saved snippet does not exist." });
    const empty = await as(member).post("/saved_snippets", { title: "  ", content: "x" });
    expect(empty.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Title cannot be empty." });

    ok(await as(member).delete(`/saved_snippets/${id}`));
    for (const q of [first, second]) {
      const [event] = await waitForEvents(q, 1);
      expect(event).toEqual({ id: expect.any(Number), type: "saved_snippets", op: "remove", saved_snippet_id: id });
    }
    await sleep(500);
    expect(await drain(colleague)).toEqual([]);
    expect(await drain(administrator)).toEqual([]);
    expect(await drain(outsider)).toEqual([]);
    expect(ok(await as(member).get("/saved_snippets")).saved_snippets).toEqual([]);
  });
});
