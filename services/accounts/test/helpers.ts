import { domainEvents } from "@chat/contracts";
import { createLogger, createPool, ManualClock, type Identity, type Role } from "@chat/platform";
import { createTestEnv, serviceClient, type ServiceWithSchema, type TestEnv } from "@chat/testkit";
import { expect } from "vitest";
import { buildApp } from "../src/app";
import { loadAccountsConfig } from "../src/config";
import type { AccountsDeps } from "../src/deps";

export interface TestUser {
  user_id: number;
  email: string;
  api_key: string;
  role: number;
  realm_id: number;
  as: Identity;
}

export interface OutboxEvent {
  type: string;
  realm_id: number;
  payload: any;
}

/**
 * The accounts app in-process against a fresh database (no listening, no broker needed).
 * `schemas`: the services whose tables the database gets (a peer service beside accounts needs its own).
 */
export async function startAccounts(extraEnv: Record<string, string> = {}, schemas: ServiceWithSchema[] = ["accounts"]) {
  const env: TestEnv = await createTestEnv();
  await env.migrate(...schemas);
  // A low scrypt cost keeps password tests fast; production uses the default.
  const config = loadAccountsConfig({ ...env.vars, PASSWORD_SCRYPT_COST: "1024", ...extraEnv });
  const pool = createPool(env.databaseUrl, "accounts", 5);
  const clock = new ManualClock(new Date());
  const deps: AccountsDeps = { pool, config, clock, log: createLogger("accounts", "silent") };
  const app = buildApp(deps);
  await app.ready();
  const call = serviceClient(app, config.INTERNAL_TOKEN);
  let outboxSeq = 0;

  const identity = (u: { user_id: number; realm_id: number; role: number; email: string; is_bot?: boolean }): Identity => ({
    userId: u.user_id,
    realmId: u.realm_id,
    role: u.role as Role,
    isBot: u.is_bot ?? false,
    email: u.email,
    client: "test",
  });

  async function ok(res: { status: number; body: any }) {
    expect(res.body, JSON.stringify(res.body)).toMatchObject({ result: "success" });
    expect(res.status).toBe(200);
    return res.body;
  }

  let orgCounter = 0;
  /** A realm with an owner plus one user of each other role and a bot owned by the member. */
  async function createOrg(name = `Org ${Date.now()} ${++orgCounter}`) {
    const slug = `o${Date.now().toString(36)}${++orgCounter}`;
    const r = await ok(
      await call("POST", "/internal/realms", {
        params: { name, owner_email: `owner@${slug}.test`, owner_full_name: "Olivia Owner", owner_password: "owner-pass-1" },
      }),
    );
    const realmId: number = r.realm_id;
    const mk = async (email: string, full_name: string, role: number, extra: Record<string, unknown> = {}): Promise<TestUser> => {
      const u = await ok(await call("POST", "/internal/users", { params: { realm_id: realmId, email, full_name, role, ...extra } }));
      return { ...u, role, realm_id: realmId, as: identity({ ...u, role, realm_id: realmId, is_bot: "bot_type" in extra }) };
    };
    const owner: TestUser = { ...r.owner, role: 100, realm_id: realmId, as: identity({ ...r.owner, role: 100, realm_id: realmId }) };
    const admin = await mk(`admin@${slug}.test`, "Adam Admin", 200, { password: "admin-pass-1" });
    const moderator = await mk(`moderator@${slug}.test`, "Mona Moderator", 300);
    const member = await mk(`member@${slug}.test`, "Mel Member", 400, { password: "member-pass-1" });
    const member2 = await mk(`member2@${slug}.test`, "Max Member", 400);
    const guest = await mk(`guest@${slug}.test`, "Gus Guest", 600);
    const bot = await mk(`bot-${slug}@${slug}.test`, "Bo Bot", 400, { bot_type: 1, bot_owner_id: member.user_id });
    return { realmId, stringId: r.string_id as string, slug, owner, admin, moderator, member, member2, guest, bot };
  }

  /** Outbox rows written since the last call (or all with `all`), checked against their contracts. */
  async function outbox(opts: { all?: boolean } = {}): Promise<OutboxEvent[]> {
    const { rows } = await pool.query("SELECT seq, type, realm_id, payload FROM outbox WHERE seq > $1 ORDER BY seq", [opts.all ? 0 : outboxSeq]);
    if (rows.length) outboxSeq = Math.max(outboxSeq, ...rows.map((r) => Number(r.seq)));
    for (const r of rows) {
      const schema = domainEvents[r.type];
      expect(schema, `no contract for ${r.type}`).toBeDefined();
      const check = schema.safeParse(r.payload);
      expect(check.success, `${r.type}: ${JSON.stringify(check.error?.issues)}`).toBe(true);
    }
    return rows.map((r) => ({ type: r.type, realm_id: Number(r.realm_id), payload: r.payload }));
  }

  /** Skips everything already in the outbox. */
  async function markOutbox() {
    await outbox();
  }

  return {
    env,
    deps,
    app,
    call,
    pool,
    clock,
    config,
    ok,
    identity,
    createOrg,
    outbox,
    markOutbox,
    async close() {
      await app.close();
      await pool.end();
      await env.cleanup();
    },
  };
}

export type Accounts = Awaited<ReturnType<typeof startAccounts>>;
export type Org = Awaited<ReturnType<Accounts["createOrg"]>>;

/** Expects a Zulip error envelope. */
export function expectError(res: { status: number; body: any }, status: number, code: string, msg?: string | RegExp) {
  expect(res.body.result, JSON.stringify(res.body)).toBe("error");
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.code).toBe(code);
  if (typeof msg === "string") expect(res.body.msg).toBe(msg);
  else if (msg) expect(res.body.msg).toMatch(msg);
}
