import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listStatuses } from "../src/store/user-status";
import { PlanProbe } from "@chat/testkit";
import { startAccounts, type Accounts, type Org } from "./helpers";

/**
 * Register's statements must cost what they return, not the organization's size, when PostgreSQL
 * plans them without statistics (a new deployment, or a server without autovacuum, like the test
 * machine's). Each statement is prepared on a nearly empty organization, the organization grows,
 * and the statement runs again with the pages it touched counted (PlanProbe in the testkit, as
 * services/messaging/test/plans.test.ts does for messaging's).
 */
let a: Accounts;
let org: Org;
let client: pg.PoolClient;
let probe: PlanProbe;
const USERS = 10_000;

beforeAll(async () => {
  a = await startAccounts();
  org = await a.createOrg();
  client = await a.pool.connect();
  probe = new PlanProbe(client);
});
afterAll(async () => {
  client?.release();
  await a?.close();
});

describe("register's user statuses", () => {
  it("read the organization's statuses, not every user of it", async () => {
    const statuses = await probe.plan("user statuses", (db) => listStatuses(db, org.realmId));
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
    expect(await probe.buffersOf(statuses)).toBeLessThan(50);
    // And under the plan made for any organization while the tables were small, which a server
    // keeps until the statistics change: with the user lookup a plain join, PostgreSQL turned it
    // around and read all 10,000 users (12,063 pages).
    expect(await probe.buffersOf(statuses, { generic: true })).toBeLessThan(50);

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
