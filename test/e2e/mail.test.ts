import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browse as browsePage, mailLink, apiClient, runDemo, startMailCatcher, startStack, type DemoOutput, type MailCatcher, type Stack } from "@chat/testkit";

/**
 * Mail the server sends, received by a real SMTP server (the test's catcher), and the web pages
 * its links lead to, driven over HTTP through the gateway as a browser would.
 */

let stack: Stack;
let demo: DemoOutput;
let catcher: MailCatcher;

beforeAll(async () => {
  catcher = await startMailCatcher();
  stack = await startStack({ env: { ...catcher.env, NOREPLY_EMAIL_ADDRESS: "noreply@chat.test" } });
  demo = await runDemo(stack);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await catcher?.close();
});

const org = () => demo.orgs[0];
const as = (who: "owner" | "admin" | "member") => apiClient(demo.base_url, org().users[who].email, org().users[who].api_key);

/** The path of a mail's link to `path`, for `browse`. */
const linkIn = (text: string, path: string) => mailLink(text, path).path;
/** A browser's GET, or POST of the page's form, through the gateway. */
const browse = (path: string, form?: Record<string, string>) => browsePage(stack.baseUrl, path, { form });

let n = 0;
const newAddress = () => `invitee${++n}-${Date.now()}@example.com`;

async function invite(email: string) {
  const res = await as("admin").post("/invites", { invitee_emails: email, stream_ids: "[]", invite_as: 400 });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return catcher.waitFor(email);
}

describe("invitation mail", () => {
  it("POST /invites mails each invitee a link from the inviter, through the organization", async () => {
    const email = newAddress();
    const mail = await invite(email);
    const admin = org().users.admin;
    expect(mail.from).toBe("noreply@chat.test");
    expect(mail.subject).toContain("invited you to join");
    expect(mail.fromName).toContain("(via ");
    expect(mail.text).toContain(admin.email);
    expect(linkIn(mail.text, "/accounts/do_confirm/")).toMatch(/^\/accounts\/do_confirm\/[A-Za-z0-9_-]{20,}$/);
    expect(mail.text).toMatch(/The link works for 10 days\./);
  });

  it("the link's page is a sign-up form naming the organization and the address, not cached", async () => {
    const email = newAddress();
    const page = await browse(linkIn((await invite(email)).text, "/accounts/do_confirm/"));
    expect(page.status).toBe(200);
    expect(page.type).toBe("text/html; charset=utf-8");
    expect(page.headers["cache-control"]).toBe("no-store");
    expect(page.text).toContain(email);
    expect(page.text).toMatch(/<form method="post">/);
    expect(page.text).toContain('name="full_name"');
  });

  it("the form creates the account: the invitee logs in with the password, the invitation is accepted, and the link is used up", async () => {
    const email = newAddress();
    const path = linkIn((await invite(email)).text, "/accounts/do_confirm/");
    const done = await browse(path, { full_name: "Grace Invitee", password: "a long password" });
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain("is ready");

    const login = await apiClient(demo.base_url).post("/fetch_api_key", { username: email, password: "a long password" });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const me = await apiClient(demo.base_url, email, login.body.api_key).get("/users/me");
    expect(me.body).toMatchObject({ full_name: "Grace Invitee", role: 400 });
    const pending = await as("admin").get("/invites");
    expect(pending.body.invites.some((i: { email?: string }) => i.email === email)).toBe(false);

    for (const again of [await browse(path), await browse(path, { full_name: "Someone", password: "another password" })]) {
      expect(again.status).toBe(404);
      expect(again.text).toContain("expired");
    }
  });

  it("a form without a name or with a short password shows again with the reason, and creates nothing", async () => {
    const email = newAddress();
    const path = linkIn((await invite(email)).text, "/accounts/do_confirm/");
    const noName = await browse(path, { full_name: "  ", password: "a long password" });
    expect(noName.status).toBe(400);
    expect(noName.text).toContain("Please enter your name.");
    const weak = await browse(path, { full_name: "Short <b>Pass</b>", password: "abc" });
    expect(weak.status).toBe(400);
    expect(weak.text).toContain("The password is too weak.");
    // What the visitor typed comes back escaped.
    expect(weak.text).toContain("Short &lt;b&gt;Pass&lt;/b&gt;");
    const login = await apiClient(demo.base_url).post("/fetch_api_key", { username: email, password: "abc" });
    expect(login.status).toBe(401);
    expect((await browse(path)).status).toBe(200);
  });

  it("a resend mails a new link and the old one stops working; a revoked invitation's link is dead", async () => {
    const email = newAddress();
    const first = linkIn((await invite(email)).text, "/accounts/do_confirm/");
    const id = (await as("admin").get("/invites")).body.invites.find((i: { email?: string }) => i.email === email).id;
    expect((await as("admin").post(`/invites/${id}/resend`)).status).toBe(200);
    const second = linkIn((await catcher.waitFor(email, (m) => !m.text.includes(first))).text, "/accounts/do_confirm/");
    expect(second).not.toBe(first);
    expect((await browse(first)).status).toBe(404);
    expect((await browse(second)).status).toBe(200);
    expect((await as("admin").delete(`/invites/${id}`)).status).toBe(200);
    expect((await browse(second)).status).toBe(404);
  });

  it("an unknown key is the expired page, not an error or another organization's invitation", async () => {
    const page = await browse("/accounts/do_confirm/not-a-real-key");
    expect(page.status).toBe(404);
    expect(page.type).toBe("text/html; charset=utf-8");
    expect(page.text).toContain("expired");
  });

  it("an invitation refused as a whole mails nobody", async () => {
    const email = newAddress();
    const res = await as("admin").post("/invites", { invitee_emails: `${email}, not-an-address`, stream_ids: "[]", invite_as: 400 });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("INVITATION_FAILED");
    await expect(catcher.waitFor(email, undefined, 1500)).rejects.toThrow(/no mail/);
  });
});

describe("deactivation notice", () => {
  it("DELETE /users/{id} with a comment mails the user who deactivated it and why; without one, nothing", async () => {
    const { guest, member2, admin } = org().users;
    const res = await as("admin").delete(`/users/${guest.user_id}`, { deactivation_notification_comment: "Thanks for <visiting>!" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const mail = await catcher.waitFor(guest.email);
    expect(mail.subject).toBe(`Your account in ${org().name} has been deactivated`);
    expect(mail.text).toContain(admin.full_name);
    expect(mail.text).toContain("Thanks for <visiting>!");

    expect((await as("admin").delete(`/users/${member2.user_id}`)).status).toBe(200);
    await expect(catcher.waitFor(member2.email, undefined, 1500)).rejects.toThrow(/no mail/);
  });
});
