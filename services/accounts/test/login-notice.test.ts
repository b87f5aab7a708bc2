import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAccounts, type Accounts, type Org } from "./helpers";

/**
 * The notice of a new login (Zulip's email_on_new_login) as accounts queues it: read from the
 * mail outbox, which the platform's MailSender sends (its own tests cover the sending).
 */

let t: Accounts;
let org: Org;

beforeAll(async () => {
  t = await startAccounts();
  org = await t.createOrg("Login <Org>");
}, 60_000);

afterAll(async () => {
  await t?.close();
});

const mailsTo = async (to: string) =>
  (await t.pool.query("SELECT subject, text_body AS text FROM mail_outbox WHERE to_address = $1 ORDER BY id", [to])).rows as Array<{ subject: string; text: string }>;

const login = (email: string, password: string, userAgent?: string) =>
  t.call("POST", "/fetch_api_key", { params: { username: email, password }, headers: userAgent ? { "user-agent": userAgent } : {} });

describe("new-login notice", () => {
  it("is not sent for an account made within the last minute (its sign-up's own login)", async () => {
    expect((await login(org.member.email, "member-pass-1")).status).toBe(200);
    expect(await mailsTo(org.member.email)).toEqual([]);
  });

  it("is mailed on each password login after that, naming the organization, the time and the device", async () => {
    t.clock.advance(120_000);
    expect((await login(org.member.email, "member-pass-1", "ZulipMobile/27.230 (Android 14)")).status).toBe(200);
    const [mail] = await mailsTo(org.member.email);
    expect(mail.subject).toBe("New login to Login <Org>");
    expect(mail.text).toContain("Device: ZulipMobile on Android");
    expect(mail.text).toMatch(/When: .*\d{4}/);
    expect(mail.text).toContain("/accounts/password/reset/");
  });

  it("is not sent for a failed login, nor to a user who turned login emails off", async () => {
    t.clock.advance(120_000);
    expect((await login(org.admin.email, "wrong password")).status).toBe(401);
    expect(await mailsTo(org.admin.email)).toEqual([]);
    await t.ok(await t.call("PATCH", "/settings", { as: org.admin.as, params: { enable_login_emails: false } }));
    expect((await login(org.admin.email, "admin-pass-1")).status).toBe(200);
    expect(await mailsTo(org.admin.email)).toEqual([]);
  });
});
