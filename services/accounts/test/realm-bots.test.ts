import { identityHeaders } from "@chat/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyEvent, type AppliedEvent, type ApplyContext } from "../../events/src/lib/apply/index";
import { startAccounts, type Accounts, type Org, type TestUser } from "./helpers";
import { multipart, notices, PNG_1X1, registerState, type Notice } from "./settings-kit";

/**
 * Register's `realm_bots` (the bots a user administers: an administrator's organization's, a
 * member's own) and the realm_bot events that keep it current: each event goes to those whose
 * list it changes, and applied to their earlier register it gives what a fresh one gives.
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

const json = (s: string) => JSON.stringify(s);
/** An action's answer, which must be a success. */
const done = (answer: Promise<{ status: number; body: any }>) => answer.then((res) => t.ok(res));
const sorted = (...users: Array<{ user_id: number }>) => users.map((u) => u.user_id).sort((a, b) => a - b);
const realmBots = async (u: TestUser, fetch: string[] | null = ["realm_bot"]) => (await registerState(t, u.as, { fetch_event_types: fetch })).realm_bots;
const createBot = async (owner: TestUser, params: Record<string, unknown>): Promise<TestUser> => {
  const res = await t.ok(await t.call("POST", "/bots", { as: owner.as, params }));
  const email = `${params.short_name}-bot@${org.stringId}.invalid`;
  const bot = { user_id: res.user_id, email, api_key: res.api_key, role: 400, realm_id: owner.realm_id };
  return { ...bot, as: t.identity({ ...bot, is_bot: true }) };
};
const patchBot = (as: TestUser, bot: TestUser, params: Record<string, unknown>) => t.call("PATCH", `/bots/${bot.user_id}`, { as: as.as, params });
const uploadAvatar = async (as: TestUser) => {
  const body = multipart([{ name: "file", filename: "bot.png", type: "image/png", data: PNG_1X1 }]);
  const res = await t.app.inject({
    method: "POST",
    url: "/api/v1/users/me/avatar",
    headers: { ...identityHeaders(as.as, t.config.INTERNAL_TOKEN), "content-type": body.contentType },
    payload: body.payload,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().avatar_url as string;
};

/**
 * Zulip's verify_action for `realm_bots`: each watcher's register before `action`, the
 * realm_bot events addressed to them applied to it, equals their register after. Returns the
 * realm_bot notices (each checked against its contract).
 */
async function follow(watchers: TestUser[], action: () => Promise<unknown>): Promise<Notice[]> {
  const before = await Promise.all(watchers.map((u) => realmBots(u)));
  await t.markOutbox();
  await action();
  const got = (await notices(t)).filter((n) => n.event.type === "realm_bot");
  for (const [i, u] of watchers.entries()) {
    const ctx: ApplyContext = { userId: u.user_id, fetchTypes: ["realm_bot"], includeSubscribers: false, clientGravatar: true };
    const state = { realm_bots: before[i] };
    for (const n of got.filter((n) => n.users.includes(u.user_id))) {
      expect(applyEvent(state, n.event as AppliedEvent, ctx), JSON.stringify(n.event)).toBe(true);
    }
    expect(state.realm_bots, u.email).toEqual(await realmBots(u));
  }
  return got;
}

/** Each notice as [op, the bot's fields, who receives it]. */
const summary = (got: Notice[]) => got.map((n) => [n.event.op, n.event.op === "add" ? { user_id: n.event.bot.user_id } : n.event.bot, n.users]);

describe("register's realm_bots", () => {
  let hook: TestUser;
  let spare: TestUser;

  beforeAll(async () => {
    hook = await createBot(org.member2, { full_name: "Hook Bot", short_name: "hook", bot_type: 3, payload_url: json("https://hooks.example.com/in"), interface_type: 2 });
    spare = await createBot(org.member, { full_name: "Spare Bot", short_name: "spare" });
    await t.ok(await t.call("DELETE", `/bots/${spare.user_id}`, { as: org.member.as }));
  });

  it("an administrator's: every bot of the organization, deactivated ones too, by id, shaped as Zulip's (without API keys)", async () => {
    const { rows } = await t.pool.query("SELECT token FROM bot_services WHERE bot_id = $1", [hook.user_id]);
    const bots = await realmBots(org.admin);
    expect(bots.map((b: any) => b.user_id)).toEqual(sorted(org.bot, hook, spare));
    expect(bots.find((b: any) => b.user_id === hook.user_id)).toEqual({
      email: hook.email,
      user_id: hook.user_id,
      full_name: "Hook Bot",
      bot_type: 3,
      is_active: true,
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
      owner_id: org.member2.user_id,
      avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/),
      services: [{ base_url: "https://hooks.example.com/in", interface: 2, token: rows[0].token }],
    });
    expect(bots.find((b: any) => b.user_id === spare.user_id)).toMatchObject({ bot_type: 1, is_active: false, owner_id: org.member.user_id, services: [] });
    expect(JSON.stringify(bots)).not.toContain(hook.api_key);
    expect(await realmBots(org.owner)).toEqual(bots);
  });

  it("anyone else's: the bots they own, deactivated ones too; none for those who own none", async () => {
    const all = await realmBots(org.admin);
    const ownedBy = (u: TestUser) => all.filter((b: any) => b.owner_id === u.user_id);
    expect((await realmBots(org.member)).map((b: any) => b.user_id)).toEqual(sorted(org.bot, spare));
    expect(await realmBots(org.member)).toEqual(ownedBy(org.member));
    expect(await realmBots(org.member2)).toEqual(ownedBy(org.member2));
    for (const u of [org.moderator, org.guest, org.bot, hook]) expect(await realmBots(u), u.email).toEqual([]);
  });

  it("another organization's administrator sees only that organization's bots", async () => {
    expect((await realmBots(other.admin)).map((b: any) => b.user_id)).toEqual([other.bot.user_id]);
  });

  it("only when realm_bot is fetched (or everything is)", async () => {
    expect(await realmBots(org.admin, ["realm_user", "realm"])).toBeUndefined();
    expect((await realmBots(org.admin, null)).map((b: any) => b.user_id)).toEqual(sorted(org.bot, hook, spare));
  });
});

describe("realm_bot events: to the bot's owner and the organization's administrators", () => {
  // Everyone who could have a realm_bots list; the member is deactivated in the last test.
  const watchers = () => [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest];
  let build: TestUser;

  it("creation: the whole bot (an outgoing webhook bot's service included)", async () => {
    let got = await follow(watchers(), async () => (build = await createBot(org.member2, { full_name: "Build Bot", short_name: "build" })));
    expect(got.map((n) => [n.event.op, n.users])).toEqual([["add", sorted(org.owner, org.admin, org.member2)]]);
    expect(got[0].event.bot).toEqual((await realmBots(org.member2)).find((b: any) => b.user_id === build.user_id));
    const relay = { full_name: "Relay Bot", short_name: "relay", bot_type: 3, payload_url: json("https://relay.example.com") };
    got = await follow(watchers(), () => createBot(org.member, relay));
    expect(got.map((n) => [n.event.op, n.event.bot.services.map((s: any) => s.base_url), n.users])).toEqual([
      ["add", ["https://relay.example.com"], sorted(org.owner, org.admin, org.member)],
    ]);
  });

  it("a new name (PATCH /bots and PATCH /users) and a new avatar; a person's changes send none", async () => {
    const admins = sorted(org.owner, org.admin, org.member2);
    expect(summary(await follow(watchers(), () => done(patchBot(org.member2, build, { full_name: "Builder" }))))).toEqual([
      ["update", { user_id: build.user_id, full_name: "Builder" }, admins],
    ]);
    expect(summary(await follow(watchers(), () => done(t.call("PATCH", `/users/${build.user_id}`, { as: org.admin.as, params: { full_name: "Builder Two" } }))))).toEqual([
      ["update", { user_id: build.user_id, full_name: "Builder Two" }, admins],
    ]);
    let url = "";
    const got = await follow(watchers(), async () => (url = await uploadAvatar(build)));
    expect(summary(got)).toEqual([["update", { user_id: build.user_id, avatar_url: url }, admins]]);
    expect(url).toMatch(/^\/user_avatars\//);
    const person = () => done(t.call("PATCH", `/users/${org.member2.user_id}`, { as: org.admin.as, params: { full_name: "Maxine Member" } }));
    expect(await follow(watchers(), person)).toEqual([]);
  });

  it("a new owner: the previous one loses the bot and the new one gains it, unless administrators, who learn the owner", async () => {
    const admins = sorted(org.owner, org.admin);
    const update = (owner: TestUser) => ({ user_id: build.user_id, owner_id: owner.user_id });
    expect(summary(await follow(watchers(), () => done(patchBot(org.member2, build, { bot_owner_id: org.member.user_id }))))).toEqual([
      ["delete", { user_id: build.user_id }, [org.member2.user_id]],
      ["add", { user_id: build.user_id }, [org.member.user_id]],
      ["update", update(org.member), admins],
    ]);
    expect(summary(await follow(watchers(), () => done(patchBot(org.member, build, { bot_owner_id: org.admin.user_id }))))).toEqual([
      ["delete", { user_id: build.user_id }, [org.member.user_id]],
      ["update", update(org.admin), admins],
    ]);
    expect(summary(await follow(watchers(), () => done(patchBot(org.admin, build, { bot_owner_id: org.member2.user_id }))))).toEqual([
      ["add", { user_id: build.user_id }, [org.member2.user_id]],
      ["update", update(org.member2), admins],
    ]);
  });

  it("deactivation and reactivation change is_active; a new API key sends nothing (keys are not in the list)", async () => {
    const admins = sorted(org.owner, org.admin, org.member2);
    expect(summary(await follow(watchers(), () => done(t.call("DELETE", `/bots/${build.user_id}`, { as: org.member2.as }))))).toEqual([
      ["update", { user_id: build.user_id, is_active: false }, admins],
    ]);
    expect(summary(await follow(watchers(), () => done(t.call("POST", `/users/${build.user_id}/reactivate`, { as: org.admin.as }))))).toEqual([
      ["update", { user_id: build.user_id, is_active: true }, admins],
    ]);
    expect(await follow(watchers(), () => done(t.call("POST", `/bots/${build.user_id}/api_key/regenerate`, { as: org.member2.as })))).toEqual([]);
  });

  it("a user who becomes an administrator gains the others' bots, and loses them with the role", async () => {
    const others = (await realmBots(org.admin)).filter((b: any) => b.owner_id !== org.member2.user_id).map((b: any) => b.user_id);
    expect(others.length).toBeGreaterThan(1);
    const promoted = await follow(watchers(), () => done(t.call("PATCH", `/users/${org.member2.user_id}`, { as: org.owner.as, params: { role: 200 } })));
    expect(summary(promoted)).toEqual(others.map((id: number) => ["add", { user_id: id }, [org.member2.user_id]]));
    // Between administrator roles nothing changes; a moderator is not one.
    expect(await follow(watchers(), () => done(t.call("PATCH", `/users/${org.member2.user_id}`, { as: org.owner.as, params: { role: 100 } })))).toEqual([]);
    const demoted = await follow(watchers(), () => done(t.call("PATCH", `/users/${org.member2.user_id}`, { as: org.owner.as, params: { role: 300 } })));
    expect(summary(demoted)).toEqual(others.map((id: number) => ["delete", { user_id: id }, [org.member2.user_id]]));
  });

  it("deactivating a user deactivates their bots: is_active to the administrators", async () => {
    const theirs = (await realmBots(org.member)).filter((b: any) => b.is_active).map((b: any) => b.user_id);
    expect(theirs.length).toBeGreaterThan(0);
    const got = await follow(
      watchers().filter((u) => u !== org.member),
      () => done(t.call("DELETE", `/users/${org.member.user_id}`, { as: org.admin.as })),
    );
    expect(summary(got)).toEqual(theirs.map((id: number) => ["update", { user_id: id, is_active: false }, sorted(org.owner, org.admin, org.member)]));
  });

  it("nothing reaches another organization, whose list is unchanged", async () => {
    const { rows } = await t.pool.query("SELECT count(*)::int AS n FROM outbox WHERE realm_id = $1 AND type = 'accounts.realm_bot.changed'", [other.realmId]);
    // Only its own bot's creation, by createOrg.
    expect(rows[0].n).toBe(1);
    expect((await realmBots(other.admin)).map((b: any) => b.user_id)).toEqual([other.bot.user_id]);
  });
});
