import { describe, expect, it } from "vitest";
import type { DemoOrg } from "@chat/testkit";
import { NO_RATE_LIMITS, ok, tally, useDemoStack, withOutboxLocked, type Answer } from "@chat/testkit/e2e";

/**
 * Requests that claim one name, sent at once through the whole stack: every answer is one Zulip
 * gives in some serial order of them (the name's refusal, never a 500), and one of them wins.
 */

let org: DemoOrg;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org] = demo.orgs));
const { as } = e2e;

/** `count` requests at once, held at their first event until `waiting` of them wait (withOutboxLocked). */
const heldBurst = (count: number, waiting: number, send: (i: number) => Promise<Answer>): Promise<Answer[]> =>
  withOutboxLocked(e2e.stack.env.databaseUrl, "accounts", waiting, () => Promise.all(Array.from({ length: count }, (_, i) => send(i))));

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
