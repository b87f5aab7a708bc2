import { INTERNAL_HEADERS } from "@chat/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD_RESET_VALIDITY_HOURS } from "../src/actions/password-reset";
import { expectError, startAccounts, type Accounts, type Org } from "./helpers";

/**
 * Password reset ("Forgot your password?") in-process with the manual clock: which accounts are
 * mailed from which host, the per-address limit, and the link's one use and 24 hours. The mails
 * are read from the outbox table the sender works from (the end-to-end test receives them over
 * SMTP).
 */

let t: Accounts;
let one: Org;
let two: Org;
/** An address with an account in both organizations. */
let shared: string;

beforeAll(async () => {
  t = await startAccounts({ ORGANIZATION_SUBDOMAINS: "true", EXTERNAL_URL: "http://chat.test" });
  one = await t.createOrg("First <Org>");
  two = await t.createOrg("Second Org");
  shared = one.member.email;
  await t.ok(await t.call("POST", "/internal/users", { params: { realm_id: two.realmId, email: shared, full_name: "Mel Twice", role: 400, password: "two-pass-12" } }));
}, 60_000);

afterAll(async () => {
  await t?.close();
});

interface OutMail {
  to: string;
  subject: string;
  text: string;
}

let seen = 0;
/** Mails queued since the last call. */
async function newMails(): Promise<OutMail[]> {
  const { rows } = await t.pool.query("SELECT id, to_address, subject, text_body FROM mail_outbox WHERE id > $1 ORDER BY id", [seen]);
  if (rows.length) seen = Number(rows[rows.length - 1].id);
  return rows.map((r) => ({ to: r.to_address, subject: r.subject, text: r.text_body }));
}

const hostOf = (org: Org) => ({ [INTERNAL_HEADERS.subdomain]: org.stringId });
const page = (method: "GET" | "POST", path: string, params: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  t.call(method, `/accounts/password/reset/${path}`, { params, headers });
let clients = 0;
/** The form sent from a client network of its own (an IPv6 /64 each), out of reach of the per-IP limit (see sends-email-by-ip.test.ts). */
const request = (email: string, headers: Record<string, string> = {}) =>
  page("POST", "", { email }, { [INTERNAL_HEADERS.clientIp]: `2001:db8:${(++clients).toString(16)}::1`, ...headers });
const keyIn = (text: string) => /\/accounts\/password\/reset\/([A-Za-z0-9_-]+)/.exec(text)![1];
const hours = (h: number) => t.clock.advance(h * 3_600_000);

describe("asking for a reset", () => {
  it("on the deployment's host, each organization where the address has an account mails its own link", async () => {
    await newMails();
    const res = await request(shared.toUpperCase());
    expect(res.status).toBe(200);
    expect(res.body).toContain("Check your email");
    const mails = await newMails();
    expect(mails.map((m) => m.to).sort()).toEqual([shared, shared]);
    const first = mails.find((m) => m.text.includes("First <Org>"))!;
    const second = mails.find((m) => m.text.includes("Second Org"))!;
    expect(first.subject).toBe("Reset your password for First <Org>");
    expect(first.text).toContain(`http://${one.stringId}.chat.test/accounts/password/reset/`);
    expect(second.text).toContain(`http://${two.stringId}.chat.test/accounts/password/reset/`);
    expect(first.text).toContain(`The link works once, for ${PASSWORD_RESET_VALIDITY_HOURS} hours.`);
    expect((await page("GET", keyIn(first.text))).body).toContain("First &lt;Org&gt;");
  });

  it("on an organization's own host only that organization's account is mailed", async () => {
    await newMails();
    expect((await request(shared, hostOf(two))).status).toBe(200);
    const mails = await newMails();
    expect(mails).toHaveLength(1);
    expect(mails[0].text).toContain(`http://${two.stringId}.chat.test/accounts/password/reset/`);
  });

  it("an address without an account there is told so, with the organizations where it has one", async () => {
    await newMails();
    const unknown = `nobody-${Date.now()}@elsewhere.test`;
    const res = await request(unknown);
    expect(res.status).toBe(200);
    expect(res.body).toContain("Check your email");
    const [mail, ...more] = await newMails();
    expect(more).toEqual([]);
    expect(mail).toMatchObject({ to: unknown, subject: "Password reset request" });
    expect(mail.text).toContain("there is no account with this address there");
    expect(mail.text).not.toContain("/accounts/password/reset/");

    // one's admin on two's host: no account there, one in the first organization.
    await request(one.admin.email, hostOf(two));
    const [elsewhere] = await newMails();
    expect(elsewhere.to).toBe(one.admin.email);
    expect(elsewhere.text).toContain(`http://${two.stringId}.chat.test`);
    expect(elsewhere.text).toContain(`First <Org> (http://${one.stringId}.chat.test)`);
    expect(elsewhere.text).not.toContain("/accounts/password/reset/");
  });

  it("bots, deactivated users and deactivated organizations get no mail; the page is the same", async () => {
    const org = await t.createOrg();
    await newMails();
    await t.ok(await t.call("DELETE", `/users/${org.member2.user_id}`, { as: org.owner.as }));
    for (const email of [org.bot.email, org.member2.email]) {
      const res = await request(email);
      expect(res.status).toBe(200);
      expect(res.body).toContain("Check your email");
    }
    await t.pool.query("UPDATE realms SET deactivated = true WHERE id = $1", [org.realmId]);
    expect((await request(org.guest.email)).status).toBe(200);
    expect((await request(`someone-new@${org.slug}.test`, hostOf(org))).status).toBe(200);
    expect(await newMails()).toEqual([]);
  });

  it("an address gets at most 2 requests an hour and 5 a day; beyond, nothing is sent or counted", async () => {
    const email = `limited-${Date.now()}@elsewhere.test`;
    await newMails();
    const sentAfter = async () => {
      expect((await request(email)).body).toContain("Check your email");
      return (await newMails()).length;
    };
    expect([await sentAfter(), await sentAfter(), await sentAfter()]).toEqual([1, 1, 0]);
    hours(1.01);
    expect([await sentAfter(), await sentAfter(), await sentAfter()]).toEqual([1, 1, 0]);
    hours(1.01);
    // Five in the day so far counting this one; the sixth waits for the first to be a day old.
    expect([await sentAfter(), await sentAfter()]).toEqual([1, 0]);
    hours(1.01);
    expect(await sentAfter()).toBe(0);
    hours(21);
    expect([await sentAfter(), await sentAfter()]).toEqual([1, 1]);
    // Other spellings of the address are the same address.
    expect(await (async () => (await request(email.toUpperCase()), (await newMails()).length))()).toBe(0);
  });

  it("an invalid address shows the form again, escaped, and mails nothing", async () => {
    await newMails();
    const res = await request(`<b>"x"</b>`);
    expect(res.status).toBe(400);
    expect(res.body).toContain("Please enter a valid email address.");
    expect(res.body).toContain("&lt;b&gt;&quot;x&quot;&lt;/b&gt;");
    expect(res.body).not.toContain("<b>");
    expect(await newMails()).toEqual([]);
  });

  it("an unknown organization host says there is none", async () => {
    const res = await page("GET", "", {}, { [INTERNAL_HEADERS.subdomain]: "no-such-org" });
    expect(res.status).toBe(404);
    expect(res.body).toContain("There is no organization at this address.");
  });
});

describe("the reset link", () => {
  async function linkFor(org: Org, email: string): Promise<string> {
    await newMails();
    await request(email, hostOf(org));
    const [mail] = await newMails();
    return keyIn(mail.text);
  }

  it("works for 24 hours", async () => {
    const org = await t.createOrg();
    const key = await linkFor(org, org.admin.email);
    hours(PASSWORD_RESET_VALIDITY_HOURS - 0.01);
    expect((await page("GET", key)).status).toBe(200);
    hours(0.02);
    const late = await page("GET", key);
    expect(late.status).toBe(404);
    expect(late.body).toContain("has expired or has already been used");
    expect((await page("POST", key, { new_password: "late-pass-123", new_password_confirm: "late-pass-123" })).status).toBe(404);
    expectError(await t.call("POST", "/fetch_api_key", { params: { username: org.admin.email, password: "late-pass-123" } }), 401, "AUTHENTICATION_FAILED");
  });

  it("sets the password once, uses up the account's other links, and keeps the API key working", async () => {
    const org = await t.createOrg();
    const older = await linkFor(org, org.member.email);
    const key = await linkFor(org, org.member.email);
    const mismatch = await page("POST", key, { new_password: "new-pass-123", new_password_confirm: "new-pass-124" });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toContain("The two passwords do not match.");
    const weak = await page("POST", key, { new_password: "abc", new_password_confirm: "abc" });
    expect(weak.status).toBe(400);
    expect(weak.body).toContain("The password is too weak.");

    const done = await page("POST", key, { new_password: "new-pass-123", new_password_confirm: "new-pass-123" });
    expect(done.status).toBe(200);
    expect(done.body).toContain("Password changed");
    expect(done.body).toContain(`http://${org.stringId}.chat.test`);
    expectError(await t.call("POST", "/fetch_api_key", { params: { username: org.member.email, password: "member-pass-1" } }), 401, "AUTHENTICATION_FAILED");
    await t.ok(await t.call("POST", "/fetch_api_key", { params: { username: org.member.email, password: "new-pass-123" } }));
    // The key the user had still authenticates.
    const auth = await t.call("POST", "/internal/authenticate", { params: { email: org.member.email, api_key: org.member.api_key } });
    expect(auth.status, JSON.stringify(auth.body)).toBe(200);

    for (const used of [key, older]) {
      expect((await page("GET", used)).status).toBe(404);
      expect((await page("POST", used, { new_password: "again-pass-1", new_password_confirm: "again-pass-1" })).status).toBe(404);
    }
  });

  it("is unknown on another organization's host, and an unknown key is the expired page", async () => {
    const org = await t.createOrg();
    const key = await linkFor(org, org.moderator.email);
    expect((await page("GET", key, {}, hostOf(one))).status).toBe(404);
    expect((await page("GET", key, {}, hostOf(org))).status).toBe(200);
    expect((await page("GET", key)).status).toBe(200);
    const unknown = await page("GET", "not-a-real-key");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toContain("has expired or has already been used");
  });

  it("of a user deactivated since is dead", async () => {
    const org = await t.createOrg();
    const key = await linkFor(org, org.member2.email);
    await t.ok(await t.call("DELETE", `/users/${org.member2.user_id}`, { as: org.owner.as }));
    expect((await page("GET", key)).status).toBe(404);
  });
});
