import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { drain, NO_RATE_LIMITS, ok, register as registerQueue, sleep, useDemoStack, verifyAction as verify, withoutId } from "@chat/testkit/e2e";
import { applyEvent, type ApplyContext } from "../../events/src/lib/apply/index";

/**
 * Bots' `realm_bots` through the whole stack (gateway, accounts, events), as Zulip's
 * verify_action checks it: register, act, collect the realm_bot events (each checked against our
 * contract and Zulip's schema), apply them to the registered state and compare with a fresh
 * register. Those who administer no bot concerned, and other organizations, hear nothing.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const { as } = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));
const TYPES = ["realm_bot"];

function verifyAction(u: DemoUser, action: () => Promise<unknown>) {
  const ctx: ApplyContext = { userId: u.user_id, fetchTypes: TYPES, includeSubscribers: false, clientGravatar: true };
  const queue = () => registerQueue(as(u), { fetch_event_types: TYPES, event_types: TYPES });
  return verify(action, { register: queue, apply: (state, e) => applyEvent(state, e, ctx) }).then((events) => events.map(withoutId));
}

const botIds = async (u: DemoUser) => {
  const q = await registerQueue(as(u), { fetch_event_types: TYPES, event_types: TYPES });
  await as(u).delete("/events", { queue_id: q.queue_id });
  return q.state.realm_bots.map((b: any) => b.user_id);
};

describe("realm_bots through the stack", () => {
  it("register: an administrator's organization's bots, a member's own, nobody else's", async () => {
    const { owner, admin, member, member2, bot } = org.users;
    for (const u of [owner, admin, member]) expect(await botIds(u), u.email).toEqual([bot.user_id]);
    expect(await botIds(member2)).toEqual([]);
    expect(await botIds(org2.users.owner)).toEqual([]);
    const state = ok(await as(admin).post("/register", { fetch_event_types: JSON.stringify(["realm_user"]) }));
    expect(state).not.toHaveProperty("realm_bots");
  });

  it("created, renamed, given away and back, deactivated and reactivated, and a role that makes an administrator", async () => {
    const { admin, moderator, member, member2, guest, bot: demoBot } = org.users;
    const outsiders = await Promise.all([moderator, guest, org2.users.owner].map((u) => registerQueue(as(u), { fetch_event_types: TYPES, event_types: TYPES })));

    let botId = 0;
    const created = await verifyAction(admin, async () => (botId = ok(await as(member).post("/bots", { full_name: "Stack Bot", short_name: "stack" })).user_id));
    const whole = expect.objectContaining({ user_id: botId, full_name: "Stack Bot", owner_id: member.user_id, is_active: true, services: [] });
    expect(created).toEqual([{ type: "realm_bot", op: "add", bot: whole }]);
    expect(await verifyAction(member, async () => ok(await as(member).patch(`/bots/${botId}`, { full_name: "Stacked Bot" })))).toEqual([
      { type: "realm_bot", op: "update", bot: { user_id: botId, full_name: "Stacked Bot" } },
    ]);

    expect(await verifyAction(member2, async () => ok(await as(admin).patch(`/bots/${botId}`, { bot_owner_id: member2.user_id })))).toEqual([
      { type: "realm_bot", op: "add", bot: expect.objectContaining({ user_id: botId, owner_id: member2.user_id }) },
    ]);
    expect(await verifyAction(member2, async () => ok(await as(admin).patch(`/bots/${botId}`, { bot_owner_id: member.user_id })))).toEqual([
      { type: "realm_bot", op: "delete", bot: { user_id: botId } },
    ]);
    expect(await verifyAction(admin, async () => ok(await as(member).patch(`/bots/${botId}`, { bot_owner_id: admin.user_id })))).toEqual([
      { type: "realm_bot", op: "update", bot: { user_id: botId, owner_id: admin.user_id } },
    ]);
    expect(await verifyAction(member, async () => ok(await as(admin).patch(`/bots/${botId}`, { bot_owner_id: member.user_id })))).toEqual([
      { type: "realm_bot", op: "add", bot: expect.objectContaining({ user_id: botId, owner_id: member.user_id }) },
    ]);

    expect(await verifyAction(member, async () => ok(await as(member).delete(`/bots/${botId}`)))).toEqual([
      { type: "realm_bot", op: "update", bot: { user_id: botId, is_active: false } },
    ]);
    expect(await verifyAction(admin, async () => ok(await as(admin).post(`/users/${botId}/reactivate`)))).toEqual([
      { type: "realm_bot", op: "update", bot: { user_id: botId, is_active: true } },
    ]);

    const promoted = await verifyAction(member2, async () => ok(await as(admin).patch(`/users/${member2.user_id}`, { role: 200 })));
    expect(promoted.map((e: any) => [e.op, e.bot.user_id])).toEqual([["add", demoBot.user_id], ["add", botId]]);
    const demoted = await verifyAction(member2, async () => ok(await as(admin).patch(`/users/${member2.user_id}`, { role: 400 })));
    expect(demoted).toEqual([demoBot.user_id, botId].map((id) => ({ type: "realm_bot", op: "delete", bot: { user_id: id } })));

    await sleep(500);
    for (const q of outsiders) {
      expect(await drain(q)).toEqual([]);
      await q.client.delete("/events", { queue_id: q.queue_id });
    }
  });
});
