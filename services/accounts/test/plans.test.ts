import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listStatuses } from "../src/store/user-status";
import { startAccounts, type Accounts, type Org } from "./helpers";

/**
 * Register's statements must cost what they return, not the organization's size. A prepared
 * statement keeps the generic plan it made while the tables were small (a new deployment, or a
 * server without autovacuum, like the test machine's), so each statement is planned here on a
 * nearly empty organization, the organization grows, and the same plan runs again with the pages
 * it touched counted (as services/messaging/test/plans.test.ts does for messaging's).
 */
let a: Accounts;
let org: Org;
let client: pg.PoolClient;
const USERS = 10_000;

beforeAll(async () => {
  a = await startAccounts();
  org = await a.createOrg();
  client = await a.pool.connect();
});
afterAll(async () => {
  client?.release();
  await a?.close();
});

/** Prepares the statement `run` sends, with a generic plan made now; returns its name and arguments. */
async function plan(run: (db: never) => Promise<unknown>): Promise<{ name: string; args: string }> {
  let captured: { text: string; values: unknown[] } | null = null;
  const recorder = {
    query: async (text: string, values: unknown[]) => {
      captured = { text, values };
      return client.query(text, values);
    },
  };
  await run(recorder as never);
  const { text, values } = captured!;
  const name = "plan_probe_statuses";
  await client.query("SET plan_cache_mode = force_generic_plan");
  await client.query(`PREPARE ${name} AS ${text}`);
  await client.query(`EXECUTE ${name}(${values.map((v) => String(Number(v))).join(", ")})`);
  await client.query("RESET plan_cache_mode");
  return { name, args: values.map((v) => String(Number(v))).join(", ") };
}

async function buffersOf(p: { name: string; args: string }): Promise<number> {
  const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE ${p.name}(${p.args})`);
  const top = rows[0]["QUERY PLAN"][0].Plan;
  return (top["Shared Hit Blocks"] ?? 0) + (top["Shared Read Blocks"] ?? 0);
}

describe("register's user statuses", () => {
  it("read the organization's statuses, not every user of it", async () => {
    const statuses = await plan((db) => listStatuses(db, org.realmId));
    await client.query(
      `INSERT INTO users (realm_id, email, delivery_email, full_name, role)
       SELECT $1, 'u' || i || '@big.test', 'u' || i || '@big.test', 'User ' || i, 400 FROM generate_series(1, ${USERS}) AS i`,
      [org.realmId],
    );
    await client.query("INSERT INTO user_status (realm_id, user_id, status_text) VALUES ($1, $2, 'on a train'), ($1, $3, '')", [
      org.realmId,
      org.member.user_id,
      org.guest.user_id,
    ]);
    await client.query("UPDATE users SET presence_enabled = false WHERE id = $1", [org.guest.user_id]);
    // Two statuses among 10,000 users: the users they belong to, looked up by key. A plan that
    // probed the statuses for every user touched two pages per user.
    expect(await buffersOf(statuses)).toBeLessThan(50);

    const listed = await listStatuses(a.pool, org.realmId);
    expect(listed.map((s) => s.userId)).toEqual([org.member.user_id, org.guest.user_id].sort((x, y) => x - y));
    expect(listed.find((s) => s.userId === org.member.user_id)).toMatchObject({ statusText: "on a train", away: false });
    expect(listed.find((s) => s.userId === org.guest.user_id)).toMatchObject({ statusText: "", away: true });
    // Deactivated users and other organizations' statuses are not listed.
    await client.query("UPDATE users SET is_active = false WHERE id = $1", [org.member.user_id]);
    expect((await listStatuses(a.pool, org.realmId)).map((s) => s.userId)).toEqual([org.guest.user_id]);
    const other = await a.createOrg();
    expect(await listStatuses(a.pool, other.realmId)).toEqual([]);
  });
});
