import { describe, expect, it } from "vitest";
import { createPool } from "@chat/platform";
import type { DemoOrg } from "@chat/testkit";
import { NO_RATE_LIMITS, ok, until, useDemoStack, type Answer } from "@chat/testkit/e2e";

/**
 * Requests that claim one name, sent at once through the whole stack: every answer is one Zulip
 * gives in some serial order of them (the name's refusal, never a 500), and one of them wins.
 */

let org: DemoOrg;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org] = demo.orgs));
const { as } = e2e;

/** Each distinct answer (status and msg) with how often it came. */
function tally(answers: Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const key = `${a.status} ${a.body?.msg ?? JSON.stringify(a.body)}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/**
 * Sends `count` requests at once while accounts' outbox is locked, so that each transaction stops
 * at its first event until at least `waiting` of them wait on a lock: the requests surely overlap,
 * each past its checks before any commits (instead of by chance).
 */
async function heldBurst(count: number, waiting: number, send: (i: number) => Promise<Answer>): Promise<Answer[]> {
  const pool = createPool(e2e.stack.env.databaseUrl, "accounts", 2);
  const holder = await pool.connect();
  try {
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE outbox IN SHARE MODE");
    const sent = Promise.all(Array.from({ length: count }, (_, i) => send(i)));
    await until("requests waiting on a lock", async () => {
      const { rows } = await pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      return rows[0].n >= waiting;
    });
    await holder.query("COMMIT");
    return await sent;
  } finally {
    holder.release();
    await pool.end();
  }
}

describe("one name claimed by requests at once", () => {
  it("renaming several user groups to one name: one is renamed, the others hear the name is taken", async () => {
    const { owner } = org.users;
    const tag = Date.now().toString(36);
    const names = Array.from({ length: 6 }, (_, i) => `race ${tag} ${i}`);
    for (const name of names) ok(await as(owner).post("/user_groups/create", { name, description: "race", members: "[]" }));
    const groups = ok(await as(owner).get("/user_groups")).user_groups.filter((g: any) => names.includes(g.name));
    const target = `race ${tag} final`;
    const answers = await heldBurst(groups.length, 2, (i) => as(owner).patch(`/user_groups/${groups[i].id}`, { name: target }));
    expect(tally(answers)).toEqual({ "200 ": 1, [`400 User group '${target}' already exists.`]: groups.length - 1 });
    const after = ok(await as(owner).get("/user_groups")).user_groups.filter((g: any) => g.name === target);
    expect(after).toHaveLength(1);
  });

  it("creating bots with one username: one is created, the others hear the username is in use", async () => {
    const { member } = org.users;
    const shortName = `race-${Date.now().toString(36)}`;
    const answers = await heldBurst(10, 2, (i) => as(member).post("/bots", { full_name: `Race bot ${i}`, short_name: shortName }));
    expect(tally(answers)).toEqual({ "200 ": 1, "400 Username already in use": 9 });
    const bots = ok(await as(member).get("/bots")).bots.filter((b: any) => b.username.startsWith(`${shortName}-bot@`));
    expect(bots).toHaveLength(1);
  });
});
