import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoUser } from "@chat/testkit";
import { NO_RATE_LIMITS, ok, register as registerQueue, sleep, useDemoStack, verifyAction as verify, withoutId } from "@chat/testkit/e2e";
import { applyEvent, type ApplyContext } from "../../events/src/lib/apply/index";

/**
 * user-lifecycle-audit.test.ts through the whole stack: a bot reactivated after its owner left
 * (register, act, apply the events, compare with a fresh register, as Zulip's verify_action), and
 * a user replacing their own API key at the gateway.
 */

let org: DemoOrg;
const s = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org] = demo.orgs));

function verifyAction(u: DemoUser, types: string[], action: () => Promise<unknown>) {
  const ctx: ApplyContext = { userId: u.user_id, fetchTypes: types, includeSubscribers: false, clientGravatar: true };
  const queue = () => registerQueue(s.as(u), { fetch_event_types: types, event_types: types });
  return verify(action, { register: queue, apply: (state, e) => applyEvent(state, e, ctx) }).then((events) => events.map(withoutId));
}

describe("a bot whose owner was deactivated, reactivated", () => {
  it("becomes the reactivating administrator's: administrators' realm_bots and everyone's realm_users agree with a fresh register", async () => {
    const { admin, member, member2 } = org.users;
    const botId = ok(await s.as(member2).post("/bots", { full_name: "Heir Bot", short_name: "heir" })).user_id;
    ok(await s.as(admin).delete(`/users/${member2.user_id}`));

    const seenByAdmin = await verifyAction(admin, ["realm_bot", "realm_user"], async () => ok(await s.as(admin).post(`/users/${botId}/reactivate`)));
    expect(seenByAdmin).toEqual([
      { type: "realm_user", op: "update", person: { user_id: botId, is_active: true } },
      { type: "realm_bot", op: "update", bot: { user_id: botId, is_active: true } },
      { type: "realm_bot", op: "update", bot: { user_id: botId, owner_id: admin.user_id } },
      { type: "realm_user", op: "update", person: { user_id: botId, bot_owner_id: admin.user_id } },
    ]);
    expect(ok(await s.as(member).get(`/users/${botId}`)).user).toMatchObject({ is_active: true, bot_owner_id: admin.user_id });

    // Deactivated again and reactivated by its new (active) owner's administrator: the owner stays.
    ok(await s.as(admin).delete(`/bots/${botId}`));
    const seenByMember = await verifyAction(member, ["realm_user"], async () => ok(await s.as(admin).post(`/users/${botId}/reactivate`)));
    expect(seenByMember).toEqual([{ type: "realm_user", op: "update", person: { user_id: botId, is_active: true } }]);
  });
});

describe("POST /users/me/api_key/regenerate through the gateway", () => {
  it("the old key is refused within a moment, the new one works, and the user's event queue carries on", async () => {
    const { moderator } = org.users;
    const old = s.as(moderator);
    const queue = await registerQueue(old, { event_types: ["heartbeat"] });

    const { api_key } = ok(await old.post("/users/me/api_key/regenerate"));
    expect(api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    const started = Date.now();
    let last: any;
    while (Date.now() - started < 3000) {
      last = await old.get("/users/me");
      if (last.status === 401) break;
      await sleep(100);
    }
    expect(last.status).toBe(401);
    expect(last.body).toMatchObject({ code: "UNAUTHORIZED", msg: "Invalid API key" });
    expect(Date.now() - started).toBeLessThan(1500);

    const renewed = s.client({ email: moderator.email, api_key });
    expect(ok(await renewed.get("/users/me")).user_id).toBe(moderator.user_id);
    // The queue belongs to the user, not to the key that registered it.
    ok(await renewed.get("/events", { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true }));
    ok(await renewed.delete("/events", { queue_id: queue.queue_id }));
  });
});
