import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";
import { everyone, notices } from "./settings-kit";

let t: Accounts;
let org: Org;
let botId: number;
let botKey: string;
let sys: Record<string, number>;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
  sys = (await t.ok(await t.call("GET", `/internal/realms/${org.realmId}`))).realm.system_groups;
});
afterAll(() => t?.close());

const createBot = (as: Org["member"], params: Record<string, unknown>) => t.call("POST", "/bots", { as: as.as, params });
const listBots = async (as: Org["member"], path = "/bots") => (await t.ok(await t.call("GET", path, { as: as.as }))).bots;

describe("POST /bots", () => {
  it("creates a bot owned by the caller, with realm_user add and its system group", async () => {
    await t.markOutbox();
    const res = await t.ok(await createBot(org.member2, { full_name: "Deploy Bot", short_name: "deploy" }));
    expect(res).toMatchObject({ default_sending_stream: null, default_events_register_stream: null, default_all_public_streams: false });
    expect(res.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(res.avatar_url).toMatch(/gravatar/);
    botId = res.user_id;
    botKey = res.api_key;
    const email = `deploy-bot@${org.stringId}.invalid`;
    const got = await notices(t);
    expect(got[0].event).toMatchObject({ type: "realm_user", op: "add", person: { user_id: botId, email, is_bot: true, bot_type: 1, bot_owner_id: org.member2.user_id } });
    expect(got[0].users).toEqual(everyone(org, [{ user_id: botId } as never]));
    // A bot of role member joins role:members and (no waiting period) role:fullmembers, as a human would.
    expect(got.slice(1, 3).map((n) => n.event)).toEqual([
      { type: "user_group", op: "add_members", group_id: sys["role:members"], user_ids: [botId] },
      { type: "user_group", op: "add_members", group_id: sys["role:fullmembers"], user_ids: [botId] },
    ]);
    // Then the whole bot to those who administer it: the owner and the administrators.
    expect(got.slice(3).map((n) => [n.event.op, n.event.bot.user_id, n.users])).toEqual([
      ["add", botId, [org.owner.user_id, org.admin.user_id, org.member2.user_id].sort((a, b) => a - b)],
    ]);
    const auth = await t.ok(await t.call("POST", "/internal/authenticate", { params: { email, api_key: botKey } }));
    expect(auth).toMatchObject({ user_id: botId, is_bot: true });
  });

  it("refuses guests, bots, bad names and taken ones", async () => {
    expectError(await createBot(org.guest, { full_name: "G Bot", short_name: "gbot" }), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await createBot(org.bot, { full_name: "B Bot", short_name: "bbot" }), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
    expectError(await createBot(org.member, { full_name: "X Bot", short_name: " " }), 400, "BAD_REQUEST", "Bad name or username");
    expectError(await createBot(org.member, { full_name: "X Bot", short_name: "a b" }), 400, "BAD_REQUEST", "Bad name or username");
    expectError(await createBot(org.member, { full_name: "", short_name: "xbot" }), 400, "BAD_REQUEST", "Name too short!");
    expectError(await createBot(org.member, { full_name: "Other", short_name: "deploy" }), 400, "BAD_REQUEST", "Username already in use");
    expectError(await createBot(org.member, { full_name: "Deploy Bot", short_name: "deploy2" }), 400, "BAD_REQUEST", "Name is already in use!");
    expectError(await createBot(org.member, { full_name: "E Bot", short_name: "ebot", bot_type: 4 }), 400, "BAD_REQUEST", "Embedded bots are not enabled.");
    expectError(await createBot(org.member, { full_name: "E Bot", short_name: "ebot", bot_type: 9 }), 400, "BAD_REQUEST", "Invalid bot type");
    expectError(await createBot(org.member, { short_name: "ebot" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'full_name' argument");
  });

  it("GET /bots and GET /users/me/bots list the caller's active bots", async () => {
    const mine = await listBots(org.member2);
    expect(mine).toEqual([
      {
        user_id: botId,
        username: `deploy-bot@${org.stringId}.invalid`,
        full_name: "Deploy Bot",
        avatar_url: expect.stringMatching(/gravatar/),
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
        bot_type: 1,
        owner_id: org.member2.user_id,
      },
    ]);
    expect(await listBots(org.member2, "/users/me/bots")).toEqual(mine);
    expect((await listBots(org.member)).map((b: any) => b.user_id)).toEqual([org.bot.user_id]);
    expect(await listBots(org.admin)).toEqual([]);
  });
});

describe("PATCH /bots/{bot_id}", () => {
  it("only the owner or an administrator; another organization's bot is missing", async () => {
    expectError(await t.call("PATCH", `/bots/${botId}`, { as: org.member.as, params: { full_name: "Mine Now" } }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await t.call("PATCH", `/bots/${org.member.user_id}`, { as: org.admin.as, params: { full_name: "XX" } }), 400, "BAD_REQUEST", "No such bot");
    const other = await t.createOrg();
    expectError(await t.call("PATCH", `/bots/${botId}`, { as: other.admin.as, params: { full_name: "XX" } }), 400, "BAD_REQUEST", "No such bot");
  });

  it("changes the owner: realm_user update with bot_owner_id to everyone", async () => {
    await t.markOutbox();
    const res = await t.ok(await t.call("PATCH", `/bots/${botId}`, { as: org.member2.as, params: { bot_owner_id: org.member.user_id } }));
    expect(res).toMatchObject({ full_name: "Deploy Bot", bot_owner: org.member.email, service_interface: null });
    const got = await notices(t);
    // Zulip's order: realm_bot (the old owner loses it, the new one gains it, administrators learn the owner), then realm_user.
    expect(got.map((n) => `${n.event.type}/${n.event.op}`)).toEqual(["realm_bot/delete", "realm_bot/add", "realm_bot/update", "realm_user/update"]);
    const n = got[3];
    expect(n.event).toEqual({ type: "realm_user", op: "update", person: { user_id: botId, bot_owner_id: org.member.user_id } });
    expect(n.users).toEqual(everyone(org, [{ user_id: botId } as never]));
    expect(n.payload.user).toMatchObject({ user_id: botId, bot_owner_id: org.member.user_id });
    expect((await listBots(org.member)).map((b: any) => b.user_id)).toEqual([org.bot.user_id, botId]);
    expect(await listBots(org.member2)).toEqual([]);
    // The previous owner no longer manages it.
    expectError(await t.call("PATCH", `/bots/${botId}`, { as: org.member2.as, params: { full_name: "XX" } }), 400, "BAD_REQUEST", "Insufficient permission");
  });

  it("refuses owners that cannot own bots", async () => {
    const p = (bot_owner_id: number) => t.call("PATCH", `/bots/${botId}`, { as: org.admin.as, params: { bot_owner_id } });
    expectError(await p(999999), 400, "BAD_REQUEST", "Failed to change owner, no such user");
    expectError(await p(org.bot.user_id), 400, "BAD_REQUEST", "Failed to change owner, bots can't own other bots");
    const gone = await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: "gone@x.test", full_name: "Gone" } }));
    await t.ok(await t.call("DELETE", `/users/${gone.user_id}`, { as: org.admin.as }));
    expectError(await p(gone.user_id), 400, "BAD_REQUEST", "Failed to change owner, user is deactivated");
  });

  it("renames (names stay unique) and changes the role (administrators only)", async () => {
    await t.markOutbox();
    await t.ok(await t.call("PATCH", `/bots/${botId}`, { as: org.member.as, params: { full_name: "Release Bot" } }));
    expect((await notices(t)).map((n) => n.event.person ?? n.event.bot)).toEqual([
      { user_id: botId, full_name: "Release Bot" },
      { user_id: botId, full_name: "Release Bot" },
    ]);
    expectError(await t.call("PATCH", `/bots/${botId}`, { as: org.member.as, params: { full_name: "Mel Member" } }), 400, "BAD_REQUEST", "Name is already in use!");
    expectError(await t.call("PATCH", `/bots/${botId}`, { as: org.member.as, params: { role: 300 } }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await t.call("PATCH", `/bots/${botId}`, { as: org.admin.as, params: { role: 100 } }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    await t.ok(await t.call("PATCH", `/bots/${botId}`, { as: org.admin.as, params: { role: 300 } }));
    // realm_user update first, then out of role:members and role:fullmembers, into role:moderators.
    expect((await notices(t)).map((n) => n.event.person?.role ?? n.event.op)).toEqual([300, "remove_members", "add_members", "remove_members"]);
  });
});

describe("bot keys and deactivation", () => {
  it("regenerates the key: the old one stops working", async () => {
    const { api_key } = await t.ok(await t.call("POST", `/bots/${botId}/api_key/regenerate`, { as: org.member.as }));
    expect(api_key).not.toBe(botKey);
    const email = `deploy-bot@${org.stringId}.invalid`;
    expectError(await t.call("POST", "/internal/authenticate", { params: { email, api_key: botKey } }), 401, "UNAUTHORIZED", "Invalid API key");
    await t.ok(await t.call("POST", "/internal/authenticate", { params: { email, api_key } }));
    expectError(await t.call("POST", `/bots/${botId}/api_key/regenerate`, { as: org.member2.as }), 400, "BAD_REQUEST", "Insufficient permission");
  });

  it("DELETE /bots/{id} deactivates it (owner or administrator)", async () => {
    expectError(await t.call("DELETE", `/bots/${botId}`, { as: org.member2.as }), 400, "BAD_REQUEST", "Insufficient permission");
    await t.markOutbox();
    await t.ok(await t.call("DELETE", `/bots/${botId}`, { as: org.member.as }));
    const [n, bot] = await notices(t);
    expect(n.event.person).toEqual({ user_id: botId, is_active: false });
    expect(bot.event.bot).toEqual({ user_id: botId, is_active: false });
    expect((await listBots(org.member)).map((b: any) => b.user_id)).toEqual([org.bot.user_id]);
    await t.ok(await t.call("DELETE", `/bots/${botId}`, { as: org.admin.as }));
    expect(await notices(t)).toEqual([]);
  });
});
