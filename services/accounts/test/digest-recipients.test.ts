import { InternalGetDigestRecipients } from "@chat/contracts";
import { createLogger, createPool, type Pool } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app";
import { startAccounts, type Accounts, type Org, type TestUser } from "./helpers";

/**
 * The digest recipients messaging's digest job walks a page at a time (`limit`, `after_user_id`),
 * over organizations whose pages run into each other: every page answers as a fresh read would,
 * though each organization's recent joins are read once for the whole walk (and again after a
 * change to its users).
 */

const WEEKDAY = 3;
let t: Accounts;
let a: Org;
let b: Org;

beforeAll(async () => {
  t = await startAccounts();
  a = await t.createOrg();
  b = await t.createOrg();
  for (const org of [a, b]) {
    await t.ok(await t.call("PATCH", "/realm", { as: org.owner.as, params: { digest_emails_enabled: true, digest_weekday: WEEKDAY } }));
  }
}, 60_000);
afterAll(() => t?.close());

type Recipient = { realm_id: number; user_id: number; new_users: number };

/** Every page from `after`, as messaging asks for them, each checked against the contract. */
async function walk(call: ReturnType<typeof serviceClient>, limit: number, onPage: (page: Recipient[]) => Promise<void> = async () => {}) {
  const now = Math.floor(t.clock.now().getTime() / 1000);
  const users: Recipient[] = [];
  for (let after = 0; ; ) {
    const res = await call("GET", InternalGetDigestRecipients.path, {
      params: { weekday: WEEKDAY, inactive_since: now - 5 * 86400, joined_since: now - 7 * 86400, after_user_id: after, limit },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { result: _r, msg: _m, ...rest } = res.body as Record<string, unknown>;
    const page = InternalGetDigestRecipients.response.parse(rest).users;
    users.push(...page);
    if (page.length < limit) return users;
    await onPage(page);
    after = page[page.length - 1].user_id;
  }
}

const humans = (org: Org): TestUser[] => [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest];
const newUsersOf = (users: Recipient[], org: Org) => users.filter((u) => u.realm_id === org.realmId).map((u) => [u.user_id, u.new_users]);
const joined = async (org: Org, name: string) =>
  t.ok(await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: `${name.split(" ")[0].toLowerCase()}@${org.slug}.test`, full_name: name, role: 400 } }));

describe("digest recipients, a page at a time", () => {
  it("pages that span two organizations answer as one page does; a join or a deactivation between pages shows on the next ones", async () => {
    const whole = await walk(t.call, 1000);
    expect(newUsersOf(whole, a)).toEqual(humans(a).map((u) => [u.user_id, 5]));
    expect(newUsersOf(whole, b)).toEqual(humans(b).map((u) => [u.user_id, 5]));
    // Four a page: the second holds the end of one organization and the start of the other.
    expect(await walk(t.call, 4)).toEqual(whole);

    // After the first page (a's first four), someone joins a and someone leaves b.
    let changed = false;
    const paged = await walk(t.call, 4, async () => {
      if (changed) return;
      changed = true;
      await joined(a, "Nina Newcomer");
      await t.ok(await t.call("DELETE", `/users/${b.member2.user_id}`, { as: b.admin.as }));
    });
    const late = (await t.pool.query("SELECT id FROM users WHERE realm_id = $1 AND full_name = 'Nina Newcomer'", [a.realmId])).rows[0].id;
    expect(newUsersOf(paged, a)).toEqual([
      ...humans(a).slice(0, 4).map((u) => [u.user_id, 5]),
      ...humans(a).slice(4).map((u) => [u.user_id, 6]),
      [Number(late), 6],
    ]);
    expect(newUsersOf(paged, b)).toEqual(humans(b).filter((u) => u !== b.member2).map((u) => [u.user_id, 4]));
    // Read afresh, a's first four count the newcomer too.
    const fresh = await walk(t.call, 1000);
    expect(newUsersOf(fresh, a)).toEqual([...humans(a).map((u) => [u.user_id, 6]), [Number(late), 6]]);
    expect(newUsersOf(fresh, b)).toEqual(newUsersOf(paged, b));
  });

  it("reads an organization's recent joins once for a whole walk, again only after its users change", async () => {
    // A second accounts process whose statements are counted (same database).
    const pool: Pool = createPool(t.env.databaseUrl, "accounts", 2);
    const reads: number[][] = [];
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as { query: unknown }).query = (text: unknown, values?: unknown[]) => {
      if (typeof text === "string" && text.includes("date_joined >=")) reads.push((values![0] as number[]).map(Number));
      return query(text, values);
    };
    const app: FastifyInstance = buildApp({ pool, config: t.config, clock: t.clock, log: createLogger("accounts", "silent") });
    await app.ready();
    try {
      const call = serviceClient(app, t.config.INTERNAL_TOKEN);
      const whole = await walk(t.call, 1000);
      expect(await walk(call, 2)).toEqual(whole);
      expect(reads.flat().sort()).toEqual([a.realmId, b.realmId].sort());

      reads.length = 0;
      expect(await walk(call, 3)).toEqual(whole);
      expect(reads.flat()).toEqual([]);

      await joined(b, "Otto Other");
      reads.length = 0;
      const after = await walk(call, 2);
      expect(reads.flat()).toEqual([b.realmId]);
      expect(after).toEqual(await walk(t.call, 1000));
      expect(newUsersOf(after, b).every(([, n]) => n === 5)).toBe(true);
    } finally {
      await app.close();
      await pool.end();
    }
  });

  it("the organizations' joins are found by an index on (realm_id, date_joined)", async () => {
    const { rows } = await t.pool.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'users' AND indexname = 'users_realm_date_joined'");
    expect(rows.map((r) => r.indexdef)).toEqual([expect.stringContaining("(realm_id, date_joined)")]);
  });
});
