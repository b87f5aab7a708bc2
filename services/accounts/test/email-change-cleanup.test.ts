import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMAIL_CHANGE_VALIDITY_HOURS } from "../src/actions/email-change";
import { startAccounts, type Accounts, type Org, type TestUser } from "./helpers";

/**
 * Email changes (`/accounts/confirm_new_email/{key}`) whose link expired are deleted by the next
 * request that asks for a change or confirms one, as expired password resets and reusable-link
 * sign-ups are by the next request of theirs.
 */

let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts({ EXTERNAL_URL: "http://chat.test" });
  org = await t.createOrg();
}, 60_000);

afterAll(async () => {
  await t?.close();
});

const hours = (h: number) => t.clock.advance(h * 3_600_000);
let n = 0;

/** Asks for `user`'s change to a new address: the change's row id and its link's key. */
async function requestChange(user: TestUser): Promise<{ id: number; key: string }> {
  const to = `new${++n}-${Date.now()}@elsewhere.test`;
  await t.ok(await t.call("PATCH", "/settings", { as: user.as, params: { email: to } }));
  const { rows } = await t.pool.query("SELECT id FROM email_changes WHERE new_email = $1", [to]);
  const mail = await t.pool.query("SELECT text_body FROM mail_outbox WHERE to_address = $1", [to]);
  return { id: Number(rows[0].id), key: /\/accounts\/confirm_new_email\/([A-Za-z0-9_-]+)/.exec(mail.rows[0].text_body)![1] };
}

const exists = async (id: number) => (await t.pool.query("SELECT 1 FROM email_changes WHERE id = $1", [id])).rowCount === 1;

describe("expired email changes", () => {
  it("are deleted by the next request for a change; unexpired ones stay", async () => {
    const expired = await requestChange(org.member);
    hours(EMAIL_CHANGE_VALIDITY_HOURS / 2);
    const fresh = await requestChange(org.moderator);
    hours(EMAIL_CHANGE_VALIDITY_HOURS / 2 + 0.01);
    expect(await exists(expired.id)).toBe(true);

    const next = await requestChange(org.member2);
    expect(await exists(expired.id)).toBe(false);
    expect(await exists(fresh.id)).toBe(true);
    expect(await exists(next.id)).toBe(true);
    // Its page is the expired one, as before.
    const page = await t.call("GET", `/accounts/confirm_new_email/${expired.key}`);
    expect(page.status).toBe(404);
    expect(page.body).toContain("expired");
  });

  it("are deleted by the confirmation of another change", async () => {
    const expired = await requestChange(org.guest);
    hours(EMAIL_CHANGE_VALIDITY_HOURS / 2);
    const confirmed = await requestChange(org.admin);
    hours(EMAIL_CHANGE_VALIDITY_HOURS / 2 + 0.01);
    expect(await exists(expired.id)).toBe(true);

    const done = await t.call("POST", `/accounts/confirm_new_email/${confirmed.key}`);
    expect(done.status, String(done.body)).toBe(200);
    expect(done.body).toContain("Email address changed");
    expect(await exists(expired.id)).toBe(false);
    // A used change stays until it expires too.
    expect(await exists(confirmed.id)).toBe(true);
  });
});
