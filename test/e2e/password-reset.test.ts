import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, browse as browsePage, mailLink, runDemo, startMailCatcher, startStack, type CaughtMail, type DemoOutput, type DemoUser, type MailCatcher, type Stack } from "@chat/testkit";

/**
 * "Forgot your password?" through the gateway, as a browser and a mail box would: the form at
 * `/accounts/password/reset/`, the mails a real SMTP server (the test's catcher) receives, and
 * the page their links open. Organizations have their own hosts (`<string_id>.chat.test`, sent as
 * the Host header); the address the test connects to is the deployment's host, serving all of
 * them. The link's expiry is tested with the manual clock in services/accounts/test.
 */

let stack: Stack;
let demo: DemoOutput;
let catcher: MailCatcher;
/** An address with an account in both demo organizations; its second one has PASSWORD. */
let shared: string;
let sharedKeyTwo: string;
const PASSWORD = "first password";

const hostOf = (org: { url?: string }) => new URL(org.url!).host;
const api = (user?: DemoUser) => apiClient(stack.baseUrl, user?.email, user?.api_key);

let clients = 0;
/**
 * A browser's GET or form POST through the gateway, at the root, on `host` (default: the
 * deployment's), each from a client network of its own (an IPv6 /64) behind the trusted proxy: one
 * network gets 5 reset mails a day (Zulip's sends_email_by_ip).
 */
const browse = (path: string, form?: Record<string, string>, host?: string) =>
  browsePage(stack.baseUrl, path, { form, host, headers: { "x-forwarded-for": `2001:db8:${(++clients).toString(16)}::1` } });
const linkIn = mailLink;

const mailsTo = (to: string) => catcher.mails.filter((m) => m.to.toLowerCase() === to.toLowerCase());
/** Waits until `count` mails reached `to`, then a little more to be sure no other follows. */
async function settled(to: string, count: number): Promise<CaughtMail[]> {
  if (count > 0) await catcher.waitFor(to, () => mailsTo(to).length >= count);
  await sleep(2500);
  return mailsTo(to);
}

let n = 0;
const unknownAddress = () => `nobody${++n}-${Date.now()}@example.com`;
const ask = (email: string, host?: string) => browse("/accounts/password/reset/", { email }, host);

beforeAll(async () => {
  catcher = await startMailCatcher();
  stack = await startStack({
    env: { ...catcher.env, NOREPLY_EMAIL_ADDRESS: "noreply@chat.test", ORGANIZATION_SUBDOMAINS: "true", EXTERNAL_URL: "http://chat.test", TRUST_PROXY_HOPS: "1" },
  });
  demo = await runDemo(stack);
  // The first organization's member2 joins the second one by invitation, with a password.
  shared = demo.orgs[0].users.member2.email;
  const invited = await api(demo.orgs[1].users.owner).post("/invites", { invitee_emails: shared, stream_ids: "[]", invite_as: 400 });
  expect(invited.status, JSON.stringify(invited.body)).toBe(200);
  const link = linkIn((await catcher.waitFor(shared)).text, "/accounts/do_confirm/");
  const joined = await browse(link.path, { full_name: "Mara Twice", password: PASSWORD }, link.host);
  expect(joined.status, joined.text).toBe(200);
  const login = await api().post("/fetch_api_key", { username: shared, password: PASSWORD }, { headers: { host: hostOf(demo.orgs[1]) } });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  sharedKeyTwo = login.body.api_key;
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await catcher?.close();
});

describe("the form asking for the address", () => {
  it("is a page at the root, on the deployment's host and on an organization's, not cached", async () => {
    const page = await browse("/accounts/password/reset/");
    expect(page.status).toBe(200);
    expect(page.type).toBe("text/html; charset=utf-8");
    expect(page.headers["cache-control"]).toBe("no-store");
    expect(page.text).toMatch(/<form method="post">/);
    expect(page.text).toContain('name="email"');
    const onOrg = await browse("/accounts/password/reset/", undefined, hostOf(demo.orgs[1]));
    expect(onOrg.status).toBe(200);
    expect(onOrg.text).toContain(demo.orgs[1].name);
    // Typed without the slash, the same form, and it is sent to where it came from.
    const bare = await browse("/accounts/password/reset");
    expect(bare.status).toBe(200);
    expect(bare.text).toContain('name="email"');
    const sent = await browse("/accounts/password/reset", { email: unknownAddress() });
    expect(sent.status).toBe(200);
    expect(sent.text).toContain("Check your email");
  });

  it("answers the same page for an address with accounts and one without", async () => {
    const unknown = unknownAddress();
    const known = await ask(demo.orgs[0].users.admin.email);
    const none = await ask(unknown);
    expect([known.status, none.status]).toEqual([200, 200]);
    expect(none.text.replace(unknown, "ADDRESS")).toBe(known.text.replace(demo.orgs[0].users.admin.email, "ADDRESS"));
    expect(none.text).toContain("Check your email");
  });

  it("shows what the visitor typed escaped, in the answer and in the form shown again", async () => {
    const odd = `o'neil&co${Date.now()}@example.com`;
    const sent = await ask(odd);
    expect(sent.status).toBe(200);
    expect(sent.text).toContain(odd.replace("&", "&amp;").replace("'", "&#39;"));
    const bad = await ask(`<script>alert(1)</script>`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("Please enter a valid email address.");
    expect(bad.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(bad.text).not.toContain("<script>");
  });
});

describe("reset mails", () => {
  it("on the deployment's host, each organization where the address has an account sends a link of its own", async () => {
    const before = mailsTo(shared).length;
    expect((await ask(shared.toUpperCase())).status).toBe(200);
    const mails = (await settled(shared, before + 2)).slice(before);
    expect(mails).toHaveLength(2);
    for (const org of demo.orgs) {
      const mail = mails.find((m) => m.subject === `Reset your password for ${org.name}`)!;
      expect(mail.from).toBe("noreply@chat.test");
      expect(linkIn(mail.text, "/accounts/password/reset/").host).toBe(hostOf(org));
      expect(mail.text).toContain("The link works once, for 24 hours.");
    }
  });

  it("on an organization's host, an address with an account only in another organization is told so, and where", async () => {
    const email = demo.orgs[0].users.moderator.email;
    const before = mailsTo(email).length;
    expect((await ask(email, hostOf(demo.orgs[1]))).status).toBe(200);
    const [mail, ...more] = (await settled(email, before + 1)).slice(before);
    expect(more).toEqual([]);
    // No account there: told so, with where it has one.
    expect(mail.subject).toBe("Password reset request");
    expect(mail.text).toContain("there is no account with this address there");
    expect(mail.text).toContain(`${demo.orgs[0].name} (http://${hostOf(demo.orgs[0])})`);
    expect(mail.text).not.toContain("/accounts/password/reset/");
  });

  it("an address without any account is mailed that it has none", async () => {
    const email = unknownAddress();
    await ask(email);
    const mail = await catcher.waitFor(email);
    expect(mail.subject).toBe("Password reset request");
    expect(mail.text).toContain(`${email} at http://chat.test, but there is no account with this address there`);
  });

  it("bots and deactivated users get nothing", async () => {
    const [org] = demo.orgs;
    expect((await api(org.users.admin).delete(`/users/${org.users.guest.user_id}`)).status).toBe(200);
    for (const email of [org.users.bot.email, org.users.guest.email]) expect((await ask(email)).status).toBe(200);
    expect(await settled(org.users.bot.email, 0)).toEqual([]);
    expect(mailsTo(org.users.guest.email)).toEqual([]);
  });

  it("an address is mailed at most twice an hour; the page says the same beyond", async () => {
    const email = unknownAddress();
    const pages = [await ask(email), await ask(email), await ask(email)];
    expect(pages.map((p) => p.status)).toEqual([200, 200, 200]);
    expect(pages[2].text).toBe(pages[0].text);
    expect(await settled(email, 2)).toHaveLength(2);
  });
});

describe("the link", () => {
  it("on an organization's host mails only its account; sets a new password once: the form checks it, logins take the new one, the API key stays", async () => {
    const two = demo.orgs[1];
    // A fresh request on the second organization's host (the address's limit allows it).
    const before = mailsTo(shared).length;
    await ask(shared, hostOf(two));
    const mails = (await settled(shared, before + 1)).slice(before);
    // Only the account of that organization.
    expect(mails).toHaveLength(1);
    const link = linkIn(mails[0].text, "/accounts/password/reset/");
    expect(link.host).toBe(hostOf(two));

    const form = await browse(link.path, undefined, link.host);
    expect(form.status).toBe(200);
    expect(form.text).toContain('name="new_password"');
    expect(form.text).toContain('name="new_password_confirm"');
    expect(form.text).toContain(two.name);
    const mismatch = await browse(link.path, { new_password: "second password", new_password_confirm: "other password" }, link.host);
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toContain("The two passwords do not match.");
    const weak = await browse(link.path, { new_password: "abc", new_password_confirm: "abc" }, link.host);
    expect(weak.status).toBe(400);
    expect(weak.text).toContain("The password is too weak.");

    const done = await browse(link.path, { new_password: "second password", new_password_confirm: "second password" }, link.host);
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain("Password changed");
    expect(done.text).toContain(`http://${hostOf(two)}`);

    const onTwo = { headers: { host: hostOf(two) } };
    expect((await api().post("/fetch_api_key", { username: shared, password: PASSWORD }, onTwo)).status).toBe(401);
    const login = await api().post("/fetch_api_key", { username: shared, password: "second password" }, onTwo);
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.email).toBe(shared);
    // The key the account had still works.
    const me = await apiClient(stack.baseUrl, shared, sharedKeyTwo).get("/users/me", {}, onTwo);
    expect(me.status, JSON.stringify(me.body)).toBe(200);

    for (const again of [await browse(link.path, undefined, link.host), await browse(link.path, { new_password: "third password", new_password_confirm: "third password" }, link.host)]) {
      expect(again.status).toBe(404);
      expect(again.text).toContain("has expired or has already been used");
    }
  });

  it("an unknown key is the expired page", async () => {
    const page = await browse("/accounts/password/reset/not-a-real-key");
    expect(page.status).toBe(404);
    expect(page.type).toBe("text/html; charset=utf-8");
    expect(page.text).toContain("has expired or has already been used");
  });
});
