import { PresenceEvent } from "@chat/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { everyone } from "./settings-kit";

/**
 * Presence as Zulip's clients see it: POST /users/me/presence every minute, GET /realm/presence,
 * GET /users/{id}/presence, register's presences, and the `presence` events others get when
 * someone comes (back) online. The clock is moved by hand.
 */

let t: Accounts;
beforeAll(async () => {
  t = await startAccounts();
});
afterAll(() => t?.close());

const report = (u: TestUser, params: Record<string, unknown> = {}) =>
  t.call("POST", "/users/me/presence", { as: u.as, params: { status: "active", ...params } });
const seconds = () => Math.floor(t.clock.now().getTime() / 1000);
const advance = (s: number) => t.clock.advance(s * 1000);

/** The presence events written since the last look, each checked against its contract. */
async function presenceEvents() {
  const rows = (await t.outbox()).filter((e) => e.type === "accounts.presence.changed");
  return rows.map((r) => ({ event: PresenceEvent.parse(r.payload.client.event), users: [...r.payload.client.users].sort((a, b) => a - b), realmId: r.realm_id }));
}

const website = (status: "active" | "idle", timestamp: number) => ({ client: "website", status, timestamp, pushable: false });
const legacy = (status: "active" | "idle", timestamp: number) => ({ aggregated: { client: "website", status, timestamp }, website: website(status, timestamp) });

describe("POST /users/me/presence", () => {
  let org: Org;
  let other: Org;
  beforeAll(async () => {
    org = await t.createOrg();
    other = await t.createOrg();
  });

  it("a first report answers everyone's presence in the legacy format and tells the organization", async () => {
    await t.markOutbox();
    const now = seconds();
    const body = await t.ok(await report(org.member));
    expect(body).toEqual({
      result: "success",
      msg: "",
      presences: { [org.member.email]: legacy("active", now) },
      presence_last_update_id: expect.any(Number),
      server_timestamp: t.clock.now().getTime() / 1000,
    });
    expect(body.presence_last_update_id).toBeGreaterThan(0);
    const events = await presenceEvents();
    expect(events).toEqual([
      {
        event: { type: "presence", user_id: org.member.user_id, email: org.member.email, server_timestamp: t.clock.now().getTime() / 1000, presence: { website: website("active", now) } },
        users: everyone(org),
        realmId: org.realmId,
      },
    ]);
  });

  it("a ping that changes nothing visible writes nothing and tells no one", async () => {
    advance(30);
    await t.markOutbox();
    const before = await t.ok(await report(org.member, { last_update_id: -1 }));
    const again = await t.ok(await report(org.member, { last_update_id: before.presence_last_update_id }));
    expect(again).toEqual({ result: "success", msg: "", presences: {}, presence_last_update_id: before.presence_last_update_id, server_timestamp: expect.any(Number) });
    expect(await t.outbox()).toEqual([]);
  });

  it("idle and active reports a minute apart move the times (a new update id) without events", async () => {
    const start = await t.ok(await report(org.member2, { last_update_id: -1 }));
    await presenceEvents();
    const first = seconds();
    advance(60);
    const idle = await t.ok(await report(org.member2, { status: "idle", last_update_id: start.presence_last_update_id }));
    expect(idle.presences).toEqual({ [org.member2.user_id]: { active_timestamp: first, idle_timestamp: seconds() } });
    expect(idle.presence_last_update_id).toBeGreaterThan(start.presence_last_update_id);
    advance(60);
    const active = await t.ok(await report(org.member2, { last_update_id: idle.presence_last_update_id }));
    expect(active.presences).toEqual({ [org.member2.user_id]: { active_timestamp: seconds(), idle_timestamp: seconds() } });
    expect(await presenceEvents()).toEqual([]);
  });

  it("coming back after more than 200 s without activity tells everyone again; idle reports never do", async () => {
    await report(org.moderator);
    await presenceEvents();
    for (let i = 0; i < 4; i++) {
      advance(60);
      await t.ok(await report(org.moderator, { status: "idle" }));
    }
    expect(await presenceEvents()).toEqual([]);
    advance(10);
    await t.ok(await report(org.moderator));
    const events = await presenceEvents();
    expect(events.map((e) => e.event.presence)).toEqual([{ website: website("active", seconds()) }]);
    expect(events[0].users).toEqual(everyone(org));
  });

  it("last_update_id asks for the modern format and only what changed since; slim_presence too, without the increment", async () => {
    const o = await t.createOrg();
    const a = await t.ok(await report(o.member, { last_update_id: -1 }));
    expect(a.presences).toEqual({ [o.member.user_id]: { active_timestamp: seconds(), idle_timestamp: seconds() } });
    await report(o.admin, { status: "idle" });
    const b = await t.ok(await report(o.member, { last_update_id: a.presence_last_update_id }));
    expect(Object.keys(b.presences)).toEqual([String(o.admin.user_id)]);
    expect(b.presence_last_update_id).toBeGreaterThan(a.presence_last_update_id);
    const slim = await t.ok(await report(o.member, { slim_presence: true }));
    expect(Object.keys(slim.presences).sort()).toEqual([o.member.user_id, o.admin.user_id].map(String).sort());
    expect(slim.presence_last_update_id).toBe(b.presence_last_update_id);
    // Never another organization's presence.
    expect(Object.keys((await t.ok(await report(other.member, { last_update_id: -1 }))).presences)).toEqual([String(other.member.user_id)]);
  });

  it("ping_only answers nothing but success", async () => {
    expect((await report(org.admin, { ping_only: true, new_user_input: true })).body).toEqual({ result: "success", msg: "" });
  });

  it("history_limit_days limits the first fetch only (default 14 days); 0 fetches nothing", async () => {
    const o = await t.createOrg();
    await report(o.guest);
    advance(20 * 86_400);
    await report(o.member);
    const first = await t.ok(await report(o.member, { last_update_id: -1 }));
    expect(Object.keys(first.presences)).toEqual([String(o.member.user_id)]);
    const month = await t.ok(await report(o.member, { last_update_id: -1, history_limit_days: 30 }));
    expect(Object.keys(month.presences).sort()).toEqual([o.member.user_id, o.guest.user_id].map(String).sort());
    expect(Object.keys((await t.ok(await report(o.member))).presences)).toEqual([o.member.email]);
    expect(await t.ok(await report(o.member, { history_limit_days: 0 }))).toMatchObject({ presences: {}, presence_last_update_id: -1 });
    // A client that has data asks by update id: the history limit no longer applies.
    const since = await t.ok(await report(o.member, { last_update_id: 1, history_limit_days: 0 }));
    expect(since.presences).toEqual({});
    expect(since.presence_last_update_id).toBe(1);
  });

  it("refuses a missing or unknown status, and bots", async () => {
    await t.markOutbox();
    expectError(await t.call("POST", "/users/me/presence", { as: org.member.as }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'status' argument");
    expectError(await report(org.member, { status: "away" }), 400, "BAD_REQUEST", "Invalid status: away");
    expectError(await report(org.bot), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    expect(await t.outbox()).toEqual([]);
  });

  it("leaves out deactivated users and bots", async () => {
    const o = await t.createOrg();
    await report(o.member);
    await report(o.member2);
    await t.ok(await t.call("DELETE", `/users/${o.member2.user_id}`, { as: o.admin.as }));
    const body = await t.ok(await report(o.member, { last_update_id: -1 }));
    expect(Object.keys(body.presences)).toEqual([String(o.member.user_id)]);
  });
});

describe("concurrent reports", () => {
  it("each change takes its own update id, and sharing turned off while the user's clients report waits its turn", async () => {
    const org = await t.createOrg();
    const humans = [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest];
    const results = await Promise.all([
      ...humans.map((u) => report(u)),
      t.call("PATCH", "/settings", { as: org.member.as, params: { presence_enabled: false } }),
      report(org.member, { status: "idle" }),
    ]);
    for (const r of results) await t.ok(r);
    const all = await t.ok(await report(org.owner, { last_update_id: -1 }));
    expect(Object.keys(all.presences).sort()).toEqual(humans.map((u) => String(u.user_id)).sort());
    // Five other first reports and the forced update: six ids at least. The member's own reports
    // add theirs only when they come before sharing is turned off (afterwards nothing is recorded).
    expect(all.presence_last_update_id).toBeGreaterThanOrEqual(6);
    const latest = await t.ok(await report(org.owner, { last_update_id: all.presence_last_update_id - 1 }));
    expect(Object.keys(latest.presences)).toHaveLength(1);
  });
});

describe("presence_enabled off (invisible mode)", () => {
  it("others see the user offline since they turned it off, no report is recorded meanwhile, and turning it on shows them at once", async () => {
    const org = await t.createOrg();
    await report(org.member);
    advance(100);
    await t.markOutbox();
    await t.ok(await t.call("PATCH", "/settings", { as: org.member.as, params: { presence_enabled: false } }));
    const hidden = seconds() - 320;
    const off = await presenceEvents();
    expect(off.map((e) => e.event.presence)).toEqual([{ website: website("active", hidden) }]);
    expect(off[0].users).toEqual(everyone(org));

    advance(60);
    const own = await t.ok(await report(org.member, { last_update_id: -1 }));
    expect(own.presences[org.member.user_id]).toEqual({ active_timestamp: hidden, idle_timestamp: hidden });
    expect(await presenceEvents()).toEqual([]);
    const seen = await t.ok(await t.call("GET", `/users/${org.member.user_id}/presence`, { as: org.member2.as }));
    expect(seen.presence.aggregated).toEqual({ status: "offline", timestamp: hidden });

    await t.ok(await t.call("PATCH", "/settings", { as: org.member.as, params: { presence_enabled: true } }));
    expect((await presenceEvents()).map((e) => e.event.presence)).toEqual([{ website: website("active", seconds()) }]);
  });

  it("`away` of POST /users/me/status does the same, between the settings and the status events", async () => {
    const org = await t.createOrg();
    await t.markOutbox();
    await t.ok(await t.call("POST", "/users/me/status", { as: org.admin.as, params: { away: true } }));
    const events = await t.outbox();
    expect(events.map((e) => e.type)).toEqual([
      "accounts.user_settings.updated",
      "accounts.global_notifications.updated",
      "accounts.presence.changed",
      "accounts.user_status.updated",
    ]);
    expect(events[2].payload.client.event.presence).toEqual({ website: website("active", seconds() - 320) });
  });
});

describe("GET /realm/presence", () => {
  it("answers the legacy format by email, without an update id; bots may ask", async () => {
    const org = await t.createOrg();
    // Idle since: a user never active counts as active when they joined (70 s of slack).
    advance(100);
    await report(org.member, { status: "idle" });
    const body = await t.ok(await t.call("GET", "/realm/presence", { as: org.bot.as }));
    expect(body).toEqual({ result: "success", msg: "", presences: { [org.member.email]: legacy("idle", seconds()) }, server_timestamp: t.clock.now().getTime() / 1000 });
  });
});

describe("GET /users/{user_id_or_email}/presence", () => {
  let org: Org;
  let other: Org;
  beforeAll(async () => {
    org = await t.createOrg();
    other = await t.createOrg();
    await report(org.member);
    await report(other.member);
  });
  const get = (key: string | number, as = org.member2) => t.call("GET", `/users/${encodeURIComponent(String(key))}/presence`, { as: as.as });

  it("answers by id or API email; aggregated says offline once past 200 s", async () => {
    const at = seconds();
    const byId = await t.ok(await get(org.member.user_id));
    expect(byId).toEqual({ result: "success", msg: "", presence: { aggregated: { status: "active", timestamp: at }, website: { status: "active", timestamp: at } } });
    expect((await t.ok(await get(org.member.email.toUpperCase()))).presence).toEqual(byId.presence);
    advance(201);
    expect((await t.ok(await get(org.member.user_id))).presence).toEqual({ aggregated: { status: "offline", timestamp: at }, website: { status: "active", timestamp: at } });
  });

  it("answers Zulip's errors: bots, unknown users, another organization's, no data yet", async () => {
    expectError(await get(org.bot.user_id), 400, "BAD_REQUEST", "Presence is not supported for bot users.");
    expectError(await get(other.member.user_id), 400, "BAD_REQUEST", "No such user");
    expectError(await get(other.member.email), 400, "BAD_REQUEST", "No such user");
    expectError(await get(999_999_999), 400, "BAD_REQUEST", "No such user");
    expectError(await get("nobody@nowhere.test"), 400, "BAD_REQUEST", "No such user");
    expectError(await get(org.guest.user_id), 400, "BAD_REQUEST", `No presence data for ${org.guest.user_id}`);
    expectError(await get(org.guest.email), 400, "BAD_REQUEST", `No presence data for ${org.guest.email}`);
  });

  it("still answers for a deactivated user (Zulip reads any user of the organization)", async () => {
    await t.ok(await t.call("DELETE", `/users/${org.member.user_id}`, { as: org.admin.as }));
    expect((await t.ok(await get(org.member.user_id))).presence.aggregated.status).toBe("offline");
  });
});

describe("register's presence state", () => {
  it("presences (legacy, or modern with slim_presence), presence_last_update_id, server_timestamp; presence_history_limit_days", async () => {
    const org = await t.createOrg();
    advance(100);
    await report(org.guest, { status: "idle" });
    advance(3 * 86_400);
    const last = await t.ok(await report(org.member, { last_update_id: -1 }));
    const state = async (params: Record<string, unknown>) =>
      t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.owner.as, params: { fetch_event_types: ["presence"], ...params } }));
    const legacyState = await state({});
    expect(legacyState).toEqual({
      result: "success",
      msg: "",
      presences: { [org.member.email]: legacy("active", seconds()), [org.guest.email]: legacy("idle", seconds() - 3 * 86_400) },
      presence_last_update_id: last.presence_last_update_id,
      server_timestamp: t.clock.now().getTime() / 1000,
    });
    const modern = await state({ slim_presence: true, presence_history_limit_days: 2 });
    expect(modern.presences).toEqual({ [org.member.user_id]: { active_timestamp: seconds(), idle_timestamp: seconds() } });
    expect(modern.presence_last_update_id).toBe(last.presence_last_update_id);
    expect(await state({ presence_history_limit_days: 0 })).toMatchObject({ presences: {}, presence_last_update_id: -1 });
    const without = await state({ fetch_event_types: ["user_status"] });
    expect(without).not.toHaveProperty("presences");
    expect(without).not.toHaveProperty("server_timestamp");
  });
});

describe("large organizations", () => {
  it("beyond 100 active users, coming online is left to polling; forced updates are still sent", async () => {
    const org = await t.createOrg();
    const slug = org.slug;
    for (let i = 0; i < 95; i += 19) {
      await Promise.all(
        Array.from({ length: 19 }, async (_, j) =>
          t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: `extra${i + j}@${slug}.test`, full_name: `Extra ${i + j}`, role: 400 } })),
        ),
      );
    }
    await t.markOutbox();
    await t.ok(await report(org.member));
    expect(await presenceEvents()).toEqual([]);
    await t.ok(await t.call("PATCH", "/settings", { as: org.member.as, params: { presence_enabled: false } }));
    const forced = await presenceEvents();
    expect(forced).toHaveLength(1);
    expect(forced[0].users).toHaveLength(102);
  });
});
