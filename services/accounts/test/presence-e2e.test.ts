import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { drain, NO_RATE_LIMITS, ok, register, sleep, useDemoStack, waitForEvents } from "@chat/testkit/e2e";
import { applyEvent, type ApplyContext } from "../../events/src/lib/apply/index";

/**
 * Presence through the whole stack (gateway, accounts, events): a report reaches the queues of
 * everyone in the organization (and no one else's) in the form each queue registered for, and
 * register's presences plus the events equal a fresh register (Zulip's verify_action).
 */

let org: DemoOrg;
let org2: DemoOrg2;
const { as } = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org, org2] = demo.orgs));

const PRESENCE_ONLY = { event_types: ["presence"], fetch_event_types: ["presence"] };
const presenceQueue = (u: DemoUser, params: Record<string, unknown> = {}) => register(as(u), { ...PRESENCE_ONLY, ...params });

describe("presence through the gateway", () => {
  it("a first report reaches every queue of the organization, with email only for queues without slim_presence; none elsewhere", async () => {
    const { member, member2, guest } = org.users;
    const legacyQ = await presenceQueue(member2);
    const slimQ = await presenceQueue(member2, { slim_presence: true });
    const guestQ = await presenceQueue(guest);
    const outsiderQ = await presenceQueue(org2.users.member);

    const reply = ok(await as(member).post("/users/me/presence", { status: "active", new_user_input: true }));
    const website = reply.presences[member.email].website;
    expect(website).toMatchObject({ client: "website", status: "active", pushable: false });

    const [legacy] = await waitForEvents(legacyQ, 1);
    const { id: _id, ...event } = legacy;
    expect(event).toEqual({ type: "presence", user_id: member.user_id, email: member.email, server_timestamp: expect.any(Number), presence: { website } });
    const [slim] = await waitForEvents(slimQ, 1);
    expect(slim).not.toHaveProperty("email");
    expect(slim).toMatchObject({ type: "presence", user_id: member.user_id, presence: { website } });
    expect((await waitForEvents(guestQ, 1)).map((e) => e.type)).toEqual(["presence"]);

    // A minute's ping that changes nothing sends nothing; nor does anything reach another organization.
    ok(await as(member).post("/users/me/presence", { status: "active", ping_only: true }));
    await sleep(1000);
    expect(await drain(legacyQ)).toEqual([]);
    expect(await drain(outsiderQ)).toEqual([]);
  });

  it("the incremental protocol, GET /realm/presence and GET /users/{id or email}/presence", async () => {
    const { member, member2, bot } = org.users;
    const first = ok(await as(member2).post("/users/me/presence", { status: "idle", last_update_id: -1 }));
    expect(Object.keys(first.presences)).toEqual(expect.arrayContaining([String(member.user_id), String(member2.user_id)]));
    const none = ok(await as(member2).post("/users/me/presence", { status: "idle", last_update_id: first.presence_last_update_id }));
    expect(none).toMatchObject({ presences: {}, presence_last_update_id: first.presence_last_update_id });

    const realm = ok(await as(bot).get("/realm/presence"));
    expect(Object.keys(realm.presences)).toEqual(expect.arrayContaining([member.email, member2.email]));
    expect(realm).not.toHaveProperty("presence_last_update_id");
    const byEmail = ok(await as(member2).get(`/users/${encodeURIComponent(member.email)}/presence`));
    const byId = ok(await as(member2).get(`/users/${member.user_id}/presence`));
    expect(byEmail.presence).toEqual(byId.presence);
    expect(byId.presence.aggregated.status).toBe("active");
    expect((await as(member2).get(`/users/${org2.users.member.user_id}/presence`)).body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "No such user" });
    expect((await as(member2).get(`/users/${bot.user_id}/presence`)).body).toMatchObject({ result: "error", msg: "Presence is not supported for bot users." });
  });

  for (const slim of [false, true]) {
    it(`register's presences plus the events equal a fresh register (${slim ? "modern" : "legacy"} format)`, async () => {
      const { moderator, admin } = org.users;
      const params = { ...PRESENCE_ONLY, slim_presence: slim };
      const act = [
        () => as(admin).post("/users/me/presence", { status: "active" }),
        () => as(admin).patch("/settings", { presence_enabled: false }),
        () => as(admin).patch("/settings", { presence_enabled: true }),
        () => as(admin).post("/users/me/status", { away: true }),
        () => as(admin).post("/users/me/status", { away: false }),
      ];
      const counts: number[] = [];
      for (const action of act) {
        const queue = await presenceQueue(moderator, params);
        const state = queue.state;
        const ctx: ApplyContext = { userId: moderator.user_id, fetchTypes: ["presence"], includeSubscribers: false, clientGravatar: true, slimPresence: slim };
        const res = await action();
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const deadline = Date.now() + 10_000;
        counts.push(0);
        for (;;) {
          for (const e of await drain(queue)) {
            counts[counts.length - 1]++;
            expect(applyEvent(state, e, ctx), `could not apply ${JSON.stringify(e)}`).toBe(true);
          }
          const fresh = await presenceQueue(moderator, params);
          await as(moderator).delete("/events", { queue_id: fresh.queue_id });
          const same = isDeepStrictEqual(state.presences, fresh.state.presences);
          if (same || Date.now() > deadline) {
            expect(state.presences).toEqual(fresh.state.presences);
            break;
          }
          await sleep(150);
        }
        await as(moderator).delete("/events", { queue_id: queue.queue_id });
      }
      // One event each: the first report, then each presence_enabled change; the modern run's
      // report comes within a minute of the last change and is news to no one.
      expect(counts).toEqual(slim ? [0, 1, 1, 1, 1] : [1, 1, 1, 1, 1]);
    });
  }
});
