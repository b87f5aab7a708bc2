import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";
import { notices, registerState } from "./settings-kit";

let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
});
afterAll(() => t?.close());

const add = (as: Org["member"], alert_words: unknown) => t.call("POST", "/users/me/alert_words", { as: as.as, params: { alert_words } });
const remove = (as: Org["member"], alert_words: unknown) => t.call("DELETE", "/users/me/alert_words", { as: as.as, params: { alert_words } });
const list = async (as: Org["member"]) => (await t.ok(await t.call("GET", "/users/me/alert_words", { as: as.as }))).alert_words;

describe("alert words", () => {
  it("starts empty", async () => {
    expect(await list(org.member)).toEqual([]);
    expect((await registerState(t, org.member.as, { fetch_event_types: ["alert_words"] })).alert_words).toEqual([]);
  });

  it("adds words (trimmed, blanks dropped, case-insensitively new ones only) and sends the whole list", async () => {
    await t.markOutbox();
    expect((await t.ok(await add(org.member, ["  deploy ", "", "Outage", "outage"]))).alert_words).toEqual(["deploy", "outage"]);
    expect((await t.ok(await add(org.member, ["DEPLOY", "on call"]))).alert_words).toEqual(["deploy", "outage", "on call"]);
    const got = await notices(t);
    expect(got.map((n) => [n.type, n.event, n.users])).toEqual([
      ["accounts.alert_words.changed", { type: "alert_words", alert_words: ["deploy", "outage"] }, [org.member.user_id]],
      ["accounts.alert_words.changed", { type: "alert_words", alert_words: ["deploy", "outage", "on call"] }, [org.member.user_id]],
    ]);
    // The replica feed carries the list with a growing version.
    expect(got[0].payload).toMatchObject({ user_id: org.member.user_id, alert_words: ["deploy", "outage"] });
    expect(got[1].payload.version).toBeGreaterThan(got[0].payload.version);
    expect(await list(org.member)).toEqual(["deploy", "outage", "on call"]);
    expect((await registerState(t, org.member.as, { fetch_event_types: ["alert_words"] })).alert_words).toEqual(["deploy", "outage", "on call"]);
    // Each user has their own list.
    expect(await list(org.member2)).toEqual([]);
  });

  it("removes words regardless of case; removing an absent word still answers and notifies", async () => {
    await t.markOutbox();
    expect((await t.ok(await remove(org.member, ["OUTAGE", "nothing-here"]))).alert_words).toEqual(["deploy", "on call"]);
    expect((await t.ok(await remove(org.member, ["nothing-here"]))).alert_words).toEqual(["deploy", "on call"]);
    const got = await notices(t);
    expect(got.map((n) => n.event.alert_words)).toEqual([
      ["deploy", "on call"],
      ["deploy", "on call"],
    ]);
  });

  it("refuses bad input with Zulip's errors and changes nothing", async () => {
    await t.markOutbox();
    expectError(await add(org.member, "deploy"), 400, "BAD_REQUEST", "alert_words is not valid JSON");
    expectError(await add(org.member, { a: 1 }), 400, "BAD_REQUEST", "alert_words is not a list");
    expectError(await add(org.member, [1]), 400, "BAD_REQUEST", "alert_words[0] is not a string");
    expectError(await add(org.member, ["x".repeat(101)]), 400, "BAD_REQUEST", "alert_words[0] is too long (limit: 100 characters)");
    // Characters as Zulip counts them: 101 emoji are too many, 100 are not (200 UTF-16 units).
    expectError(await add(org.member, ["😀".repeat(101)]), 400, "BAD_REQUEST", "alert_words[0] is too long (limit: 100 characters)");
    expectError(await t.call("POST", "/users/me/alert_words", { as: org.member.as }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'alert_words' argument");
    expectError(await remove(org.member, "[1"), 400, "BAD_REQUEST", "alert_words is not valid JSON");
    expect(await notices(t)).toEqual([]);
    expect(await list(org.member)).toEqual(["deploy", "on call"]);
  });

  it("counts a word's length in characters: 100 emoji are a word of 100", async () => {
    const word = "😀".repeat(100);
    expect((await t.ok(await add(org.member2, [word]))).alert_words).toEqual([word]);
  });
});
