import { domainEvents, Subscribe } from "@chat/contracts";
import { createLogger, createPool, encodeParams, ManualClock, parseParams, type Identity, type Role } from "@chat/platform";
import { createTestEnv, serviceClient, type TestEnv } from "@chat/testkit";
import type { FastifyInstance } from "fastify";
import { expect } from "vitest";
import { buildApp as buildAccountsApp } from "../../accounts/src/app";
import { loadAccountsConfig } from "../../accounts/src/config";
import { bulkAddSubscriptions } from "../src/actions/subscriptions";
import { buildApp, createDeps } from "../src/app";
import { loadMessagingConfig } from "../src/config";
import type { AppDeps } from "../src/deps";
import { subscribeRequest } from "../src/routes/subscriptions";

export interface TestUser {
  user_id: number;
  email: string;
  full_name: string;
  role: number;
  realm_id: number;
  as: Identity;
}

export interface OutboxEvent {
  type: string;
  realm_id: number;
  payload: any;
}

type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/**
 * Messaging in-process against a fresh database, with the real accounts app listening on a
 * free port for the realm, user and group lookups messaging makes over HTTP.
 */
export async function startMessaging() {
  const env: TestEnv = await createTestEnv();
  await env.migrate("accounts", "messaging");
  const accountsConfig = loadAccountsConfig({ ...env.vars, PASSWORD_SCRYPT_COST: "1024" });
  const accountsPool = createPool(env.databaseUrl, "accounts", 4);
  const log = createLogger("test", "silent");
  const clock = new ManualClock(new Date());
  const accountsApp: FastifyInstance = buildAccountsApp({ pool: accountsPool, config: accountsConfig, clock, log });
  await accountsApp.listen({ host: "127.0.0.1", port: 0 });
  const address = accountsApp.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const config = loadMessagingConfig({ ...env.vars, ACCOUNTS_URL: `http://127.0.0.1:${port}`, REALM_CACHE_MS: "0" });
  const deps: AppDeps = createDeps(config, log, { clock });
  const app = buildApp(deps);
  await app.ready();
  const raw = serviceClient(app, config.INTERNAL_TOKEN);
  const accountsCall = serviceClient(accountsApp, config.INTERNAL_TOKEN);
  let outboxSeq = 0;

  /** Calls messaging as `as`, the way the gateway would. */
  const call = (method: Method, path: string, as: TestUser | Identity | null, params: Record<string, unknown> = {}) =>
    raw(method, path, { as: as && "as" in as ? as.as : (as as Identity | null), params });

  async function ok(res: { status: number; body: any }) {
    expect(res.body, JSON.stringify(res.body)).toMatchObject({ result: "success", msg: "" });
    expect(res.status).toBe(200);
    return res.body;
  }

  const identity = (u: { user_id: number; realm_id: number; role: number; email: string; is_bot?: boolean }, client = "test"): Identity => ({
    userId: u.user_id,
    realmId: u.realm_id,
    role: u.role as Role,
    isBot: u.is_bot ?? false,
    email: u.email,
    client,
  });

  let orgCounter = 0;
  /** An organization with one user of each role and a bot owned by the member. */
  async function createOrg() {
    const slug = `o${Date.now().toString(36)}${++orgCounter}`;
    const r = await ok(
      await accountsCall("POST", "/internal/realms", {
        params: { name: `Org ${slug}`, string_id: slug, owner_email: `owner@${slug}.test`, owner_full_name: "Olivia Owner" },
      }),
    );
    const realmId: number = r.realm_id;
    const mk = async (local: string, full_name: string, role: number, extra: Record<string, unknown> = {}): Promise<TestUser> => {
      const email = `${local}@${slug}.test`;
      const u = await ok(await accountsCall("POST", "/internal/users", { params: { realm_id: realmId, email, full_name, role, ...extra } }));
      return { user_id: u.user_id, email: u.email, full_name, role, realm_id: realmId, as: identity({ ...u, role, realm_id: realmId, is_bot: "bot_type" in extra }) };
    };
    const owner: TestUser = {
      user_id: r.owner.user_id,
      email: r.owner.email,
      full_name: "Olivia Owner",
      role: 100,
      realm_id: realmId,
      as: identity({ ...r.owner, role: 100, realm_id: realmId }),
    };
    const admin = await mk("admin", "Adam Admin", 200);
    const moderator = await mk("moderator", "Mona Moderator", 300);
    const member = await mk("member", "Mel Member", 400);
    const member2 = await mk("member2", "Max Member", 400);
    const guest = await mk("guest", "Gus Guest", 600);
    const bot = await mk(`bot-${slug}`, "Bo Bot", 400, { bot_type: 1, bot_owner_id: member.user_id });
    /** Another user of this org (used to pass wildcard thresholds). */
    const extra = (i: number, role = 400) => mk(`extra${i}`, `Extra Person ${i}`, role);
    return { realmId, slug, owner, admin, moderator, member, member2, guest, bot, extra };
  }

  /** Outbox rows since the last call, each checked against its domain-event contract. */
  async function outbox(): Promise<OutboxEvent[]> {
    const { rows } = await deps.pool.query("SELECT seq, type, realm_id, payload FROM outbox WHERE seq > $1 ORDER BY seq", [outboxSeq]);
    if (rows.length) outboxSeq = Math.max(outboxSeq, ...rows.map((r) => Number(r.seq)));
    for (const r of rows) {
      const schema = domainEvents[r.type];
      expect(schema, `no contract for ${r.type}`).toBeDefined();
      const check = schema.safeParse(r.payload);
      expect(check.success, `${r.type}: ${JSON.stringify(check.error?.issues)}`).toBe(true);
    }
    return rows.map((r) => ({ type: r.type, realm_id: Number(r.realm_id), payload: r.payload }));
  }

  /** The client events (event + audience) written since the last outbox read. */
  async function clientEvents(): Promise<Array<{ type: string; event: any; users: any[]; notice: any }>> {
    return (await outbox()).map((o) => ({ type: o.type, event: o.payload.client.event, users: o.payload.client.users, notice: o.payload.client }));
  }

  /** Counts rows of a messaging table (no-change checks after bad input). */
  async function count(table: string): Promise<number> {
    const { rows } = await deps.pool.query(`SELECT count(*)::int AS n FROM ${table}`);
    return rows[0].n;
  }

  /**
   * Subscribes `users` to a new or existing channel, created by `creator`: POST
   * /users/me/subscriptions' action without the notification bot's messages, as Zulip's test
   * helpers subscribe (bulk_add_subscriptions), so that a test's channels start empty.
   */
  async function createStream(creator: TestUser, name: string, users: TestUser[] = [creator], opts: Record<string, unknown> = {}) {
    const raw = { subscriptions: [{ name }], principals: users.map((u) => u.user_id), ...opts };
    const { values } = parseParams(Subscribe.params, { body: Object.fromEntries(encodeParams(raw)), query: {}, path: {} });
    await bulkAddSubscriptions(deps, creator.as, subscribeRequest(values));
    const res = await ok(await call("GET", "/get_stream_id", creator, { stream: name }));
    return res.stream_id as number;
  }

  /** Deactivates a user's account through accounts (they leave the organization). */
  async function deactivate(user: TestUser) {
    await ok(await accountsCall("DELETE", "/users/me", { as: user.as }));
  }

  /** Changes realm settings directly in accounts' schema (no admin API for them in scope). */
  async function setRealmSetting(realmId: number, column: string, value: unknown) {
    await accountsPool.query(`UPDATE realms SET ${column} = $2 WHERE id = $1`, [realmId, value]);
  }

  /** Creates a user group through accounts' public API as `creator`. */
  async function createGroup(creator: TestUser, name: string, members: TestUser[]) {
    await ok(await accountsCall("POST", "/user_groups/create", { as: creator.as, params: { name, description: name, members: members.map((u) => u.user_id) } }));
    const res = await ok(await accountsCall("GET", "/user_groups", { as: creator.as }));
    return (res.user_groups as Array<{ id: number; name: string }>).find((g) => g.name === name)!.id;
  }

  /** Changes who may mention a group (accounts' public API). */
  async function setGroupCanMention(admin: TestUser, groupId: number, value: unknown) {
    await ok(await accountsCall("PATCH", `/user_groups/${groupId}`, { as: admin.as, params: { can_mention_group: value } }));
  }

  /** Adds a linkifier through accounts' public API as an administrator. */
  async function createLinkifier(admin: TestUser, pattern: string, urlTemplate: string) {
    await ok(await accountsCall("POST", "/realm/filters", { as: admin.as, params: { pattern, url_template: urlTemplate } }));
  }

  async function send(from: TestUser, params: Record<string, unknown>) {
    return (await ok(await call("POST", "/messages", from, params))).id as number;
  }

  return {
    env,
    deps,
    app,
    call,
    ok,
    clock,
    identity,
    createOrg,
    outbox,
    clientEvents,
    count,
    createStream,
    deactivate,
    setRealmSetting,
    createGroup,
    createLinkifier,
    setGroupCanMention,
    accountsPool,
    accountsApp,
    send,
    async close() {
      await app.close();
      await accountsApp.close();
      await deps.pool.end();
      await accountsPool.end();
      await env.cleanup();
    },
  };
}

export type Messaging = Awaited<ReturnType<typeof startMessaging>>;
export type Org = Awaited<ReturnType<Messaging["createOrg"]>>;

export function expectError(res: { status: number; body: any }, status: number, code: string, msg?: string | RegExp) {
  expect(res.body.result, JSON.stringify(res.body)).toBe("error");
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.code).toBe(code);
  if (typeof msg === "string") expect(res.body.msg).toBe(msg);
  else if (msg) expect(res.body.msg).toMatch(msg);
}

/** A new user of `o` whose id is the first free one whose digits `fits` (the id sequence moved there). */
export async function userWithId(m: Messaging, o: Org, fits: (digits: string) => boolean): Promise<TestUser> {
  const { rows } = await m.accountsPool.query("SELECT max(id) AS max FROM users");
  let id = Number(rows[0].max) + 1;
  while (!fits(String(id))) id++;
  await m.accountsPool.query("SELECT setval(pg_get_serial_sequence('users', 'id'), $1)", [id - 1]);
  const u = await o.extra(id);
  expect(u.user_id).toBe(id);
  return u;
}
