import { publicRoutes } from "@chat/contracts";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app";
import { loadAccountsConfig } from "../src/config";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";

/**
 * The internal lookups other services use instead of public routes: the whole user list, the
 * named user groups, the linkifiers and personal settings. Each stays inside the realm asked for.
 */
let t: Accounts;
let org: Org;
let other: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  other = await t.createOrg();
});
afterAll(() => t?.close());

const get = (path: string, params: Record<string, unknown>) => t.call("GET", path, { params });

describe("GET /internal/users with only realm_id", () => {
  it("lists every user of the realm as GET /users does, deactivated ones and bots included", async () => {
    const leaver = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "leaver@lookups.test", full_name: "Lee Ver" } }));
    await t.ok(await t.call("DELETE", "/users/me", { as: t.identity({ ...leaver, realm_id: org.realmId, role: 400 }) }));

    const { users } = await t.ok(await get("/internal/users", { realm_id: org.realmId }));
    const { members } = await t.ok(await t.call("GET", "/users", { as: org.owner.as }));
    expect(users.map((u: any) => u.user_id).sort()).toEqual(members.map((u: any) => u.user_id).sort());
    const ids = users.map((u: any) => u.user_id);
    for (const u of [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest, org.bot]) expect(ids).toContain(u.user_id);
    expect(users.find((u: any) => u.user_id === leaver.user_id)).toMatchObject({ is_active: false, realm_id: org.realmId });
    expect(users.find((u: any) => u.user_id === org.bot.user_id)).toMatchObject({ is_bot: true, bot_owner_id: org.member.user_id });
    // The realm's system bots are not members of the organization's user list.
    const realm = (await t.ok(await get(`/internal/realms/${org.realmId}`, {}))).realm;
    expect(ids).not.toContain(realm.notification_bot_id);
    expect(users.every((u: any) => u.realm_id === org.realmId)).toBe(true);
  });

  it("an explicitly empty filter still finds nobody; an unknown realm has no users", async () => {
    expect((await t.ok(await get("/internal/users", { realm_id: org.realmId, user_ids: [] }))).users).toEqual([]);
    expect((await t.ok(await get("/internal/users", { realm_id: org.realmId, emails: [] }))).users).toEqual([]);
    expect((await t.ok(await get("/internal/users", { realm_id: 987654321 }))).users).toEqual([]);
  });
});

describe("GET /internal/user_groups", () => {
  it("lists the realm's named groups, system ones flagged, and nothing of another realm", async () => {
    await t.ok(await t.call("POST", "/user_groups/create", { as: org.member.as, params: { name: "support", description: "help", members: [org.member.user_id] } }));
    await t.ok(await t.call("POST", "/user_groups/create", { as: other.member.as, params: { name: "theirs", description: "", members: [] } }));
    const { user_groups } = await t.ok(await get("/internal/user_groups", { realm_id: org.realmId }));
    const system = user_groups.filter((g: any) => g.is_system_group).map((g: any) => g.name);
    expect(system.sort()).toEqual(
      ["role:owners", "role:administrators", "role:moderators", "role:fullmembers", "role:members", "role:everyone", "role:internet", "role:nobody"].sort(),
    );
    const support = user_groups.find((g: any) => g.name === "support");
    expect(support).toEqual({ id: expect.any(Number), name: "support", is_system_group: false });
    expect(user_groups.some((g: any) => g.name === "theirs")).toBe(false);
    // The ids are the ones members see.
    const publicList = (await t.ok(await t.call("GET", "/user_groups", { as: org.member.as }))).user_groups;
    expect(user_groups.map((g: any) => g.id).sort()).toEqual(publicList.map((g: any) => g.id).sort());
    expectError(await get("/internal/user_groups", {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'realm_id' argument");
  });
});

describe("GET /internal/linkifiers", () => {
  it("lists the realm's linkifiers in their order", async () => {
    await t.ok(await t.call("POST", "/realm/filters", { as: org.admin.as, params: { pattern: "#(?P<id>[0-9]+)", url_template: "https://issues.test/{id}" } }));
    await t.ok(await t.call("POST", "/realm/filters", { as: org.admin.as, params: { pattern: "PR(?P<id>[0-9]+)", url_template: "https://prs.test/{id}" } }));
    const { linkifiers } = await t.ok(await get("/internal/linkifiers", { realm_id: org.realmId }));
    expect(linkifiers.map((l: any) => [l.pattern, l.url_template])).toEqual([
      ["#(?P<id>[0-9]+)", "https://issues.test/{id}"],
      ["PR(?P<id>[0-9]+)", "https://prs.test/{id}"],
    ]);
    const publicList = (await t.ok(await t.call("GET", "/realm/linkifiers", { as: org.member.as }))).linkifiers;
    expect(linkifiers).toEqual(publicList);
    await t.ok(await t.call("PATCH", "/realm/linkifiers", { as: org.admin.as, params: { ordered_linkifier_ids: [linkifiers[1].id, linkifiers[0].id] } }));
    expect((await t.ok(await get("/internal/linkifiers", { realm_id: org.realmId }))).linkifiers.map((l: any) => l.id)).toEqual([linkifiers[1].id, linkifiers[0].id]);
    expect((await t.ok(await get("/internal/linkifiers", { realm_id: other.realmId }))).linkifiers).toEqual([]);
  });
});

describe("GET /internal/user_settings", () => {
  it("returns current values: the user's own, else the defaults they started with", async () => {
    await t.ok(await t.call("PATCH", "/settings", { as: org.member.as, params: { enable_drafts_synchronization: false, automatically_follow_topics_policy: 4 } }));
    await t.ok(await t.call("PATCH", "/realm/user_settings_defaults", { as: org.admin.as, params: { automatically_follow_topics_where_mentioned: false } }));
    const late = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "late@lookups.test", full_name: "Late Comer" } }));

    const ids = [org.member.user_id, org.member2.user_id, late.user_id, other.member.user_id, 987654321];
    const { users } = await t.ok(await get("/internal/user_settings", { realm_id: org.realmId, user_ids: ids }));
    const byId = new Map(users.map((u: any) => [u.user_id, u.settings]));
    // Another realm's user and an unknown id are simply absent.
    expect([...byId.keys()].sort()).toEqual([org.member.user_id, org.member2.user_id, late.user_id].sort());
    expect(byId.get(org.member.user_id)).toMatchObject({
      enable_drafts_synchronization: false,
      automatically_follow_topics_policy: 4,
      automatically_unmute_topics_in_muted_streams_policy: 2,
      automatically_follow_topics_where_mentioned: true,
    });
    expect(byId.get(org.member2.user_id)).toMatchObject({ enable_drafts_synchronization: true, automatically_follow_topics_policy: 3, automatically_follow_topics_where_mentioned: true });
    // Users created after the organization changed its defaults start with the new ones.
    expect(byId.get(late.user_id)).toMatchObject({ automatically_follow_topics_where_mentioned: false });
    // The same values register reports to the user.
    const state = await t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.member.as, params: { fetch_event_types: ["user_settings"] } }));
    const { available_notification_sounds: _s, emojiset_choices: _e, ...settings } = state.user_settings;
    expect(byId.get(org.member.user_id)).toEqual(settings);

    expectError(await get("/internal/user_settings", { realm_id: org.realmId }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'user_ids' argument");
    expect((await t.ok(await get("/internal/user_settings", { realm_id: org.realmId, user_ids: [] }))).users).toEqual([]);
  });
});

describe("internal lookups are internal", () => {
  it("are not public routes and refuse callers without the internal token", async () => {
    for (const path of ["/internal/user_groups", "/internal/linkifiers", "/internal/user_settings", "/internal/users"]) {
      expect(publicRoutes.some((r) => r.path === path)).toBe(false);
      const res = await t.app.inject({ method: "GET", url: `/api/v1${path}?realm_id=${org.realmId}` });
      expect(res.statusCode).toBe(401);
    }
  });
});

describe("register: max_file_upload_size_mib", () => {
  it("reports MAX_FILE_UPLOAD_SIZE_MIB (default 100, the limit messaging enforces)", async () => {
    const state = await t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.member.as, params: { fetch_event_types: ["realm"] } }));
    expect(state.max_file_upload_size_mib).toBe(100);

    const config = loadAccountsConfig({ ...t.env.vars, MAX_FILE_UPLOAD_SIZE_MIB: "25" });
    expect(config.MAX_FILE_UPLOAD_SIZE_MIB).toBe(25);
    expect(() => loadAccountsConfig({ ...t.env.vars, MAX_FILE_UPLOAD_SIZE_MIB: "lots" })).toThrow(/MAX_FILE_UPLOAD_SIZE_MIB/);
    const app = buildApp({ ...t.deps, config });
    try {
      await app.ready();
      const call = serviceClient(app, config.INTERNAL_TOKEN);
      const res = await t.ok(await call("POST", "/internal/register_state/accounts", { as: org.member.as, params: { fetch_event_types: ["realm"] } }));
      expect(res.max_file_upload_size_mib).toBe(25);
    } finally {
      await app.close();
    }
  });
});
