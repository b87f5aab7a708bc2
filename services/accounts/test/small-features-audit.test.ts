import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAccounts, type Accounts, type Org } from "./helpers";

/**
 * Differences from Zulip found by auditing the smaller features (user status here) against the
 * spec, Zulip's OpenAPI description and the notes, each shown through what a client reads.
 */
let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg();
});
afterAll(() => t?.close());

const statusOf = async (userId: number) => (await t.ok(await t.call("GET", `/users/${userId}/status`, { as: org.member2.as }))).status;
const registerStatuses = async () =>
  (await t.ok(await t.call("POST", "/internal/register_state/accounts", { as: org.member2.as, params: { fetch_event_types: ["user_status"] } }))).user_status;

describe("GET /users/{id}/status of a user who never set a status", () => {
  // Zulip answers from the user's status row: without one the status is empty, whatever
  // presence_enabled says, as register's user_status (which lists only users with a row) shows.
  it("is empty after presence_enabled is turned off in the settings, as register shows it; `away` makes the row", async () => {
    const { member } = org;
    await t.ok(await t.call("PATCH", "/settings", { as: member.as, params: { presence_enabled: false } }));
    expect(await statusOf(member.user_id)).toEqual({});
    expect(await registerStatuses()).not.toHaveProperty(String(member.user_id));

    await t.ok(await t.call("POST", "/users/me/status", { as: member.as, params: { away: true } }));
    expect(await statusOf(member.user_id)).toEqual({ away: true });
    expect((await registerStatuses())[String(member.user_id)]).toEqual({ away: true });
  });
});
