import { createLogger, INTERNAL_HEADERS, MailSender } from "@chat/platform";
import { startMailCatcher, type CaughtMail, type MailCatcher } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAccounts, type Accounts, type Org, type TestUser } from "./helpers";

/**
 * Every mail accounts sends has an HTML part beside its text, as Zulip's: the same words, names
 * and other people's text escaped, each link of the text an <a href> to itself. The mails are
 * sent over SMTP to the test's catcher by the platform's MailSender, as main.ts runs it.
 */

/** Markup in an organization's name, and what of it a user's name may have (no `>`). */
const ORG_NAME = "Bold <b>& Co";
const USER_NAME = "Ada <b & O'Admin";

let catcher: MailCatcher;
let sender: MailSender;
let t: Accounts;
let org: Org;
let other: Org;
let ada: TestUser;

beforeAll(async () => {
  catcher = await startMailCatcher();
  t = await startAccounts({ ...catcher.env, NOREPLY_EMAIL_ADDRESS: "noreply@chat.test", ORGANIZATION_SUBDOMAINS: "true", EXTERNAL_URL: "http://chat.test" });
  sender = new MailSender({ pool: t.pool, config: t.config, log: createLogger("mail", "silent"), clock: t.clock });
  sender.start();
  org = await t.createOrg(ORG_NAME);
  other = await t.createOrg("Plain Org");
  const u = await t.ok(
    await t.call("POST", "/internal/users", { params: { realm_id: org.realmId, email: `ada@${org.slug}.test`, full_name: USER_NAME, role: 200, password: "ada-pass-123" } }),
  );
  ada = { ...u, role: 200, realm_id: org.realmId, as: t.identity({ ...u, role: 200, realm_id: org.realmId }) };
}, 60_000);

afterAll(async () => {
  await sender?.stop();
  await t?.close();
  await catcher?.close();
});

const escaped = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
const unescaped = (s: string) =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
const words = (s: string) => s.replace(/\s+/g, " ").trim();

/** The URLs of a text part, without the punctuation after them. */
const textLinks = (text: string) => [...text.matchAll(/https?:\/\/[^\s()]+/g)].map((m) => m[0].replace(/[.,:]$/, ""));
/** The links of an HTML part: where each leads and what it shows. */
const htmlLinks = (html: string) => [...html.matchAll(/<a\s[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/g)].map((m) => ({ href: unescaped(m[1]), shown: unescaped(m[2]) }));
/** What a reader of the HTML part sees, as text. */
const htmlText = (html: string) => unescaped(html.replace(/<!DOCTYPE[^>]*>/i, "").replace(/<(br|\/?p|\/?html|\/?body)\b[^>]*>/gi, "\n").replace(/<[^>]+>/g, ""));

/**
 * The mail's HTML part says what its text says, with each of its links (among them the one to
 * `path`) as a link showing itself, and `names` escaped: none of their markup gets through.
 */
function expectHtmlPart(mail: CaughtMail, path: string, names: string[]) {
  expect(mail.html, mail.text).not.toBeNull();
  const html = mail.html!;
  const links = textLinks(mail.text);
  expect(links.some((l) => new URL(l).pathname.startsWith(path)), mail.text).toBe(true);
  expect(htmlLinks(html)).toEqual(links.map((l) => ({ href: l, shown: l })));
  expect(words(htmlText(html))).toBe(words(mail.text));
  for (const name of names) {
    expect(mail.text).toContain(name);
    // A line break of a comment is one in the HTML part too.
    for (const part of name.split("\n")) expect(html).toContain(escaped(part));
  }
  expect(html).not.toContain("<b>");
}

const orgHost = (o: Org) => ({ [INTERNAL_HEADERS.subdomain]: o.stringId });
const keyIn = (text: string, path: string) => new RegExp(`${path}([A-Za-z0-9_-]+)`).exec(text)![1];
let n = 0;
const newAddress = () => `new${++n}-${Date.now()}@example.com`;

describe("the HTML part of accounts' mails", () => {
  it("invitation", async () => {
    const to = newAddress();
    await t.ok(await t.call("POST", "/invites", { as: ada.as, params: { invitee_emails: to, stream_ids: [], invite_as: 400 } }));
    expectHtmlPart(await catcher.waitFor(to), "/accounts/do_confirm/", [USER_NAME, ORG_NAME]);
  });

  it("reusable link's sign-up confirmation", async () => {
    const { invite_link } = await t.ok(await t.call("POST", "/invites/multiuse", { as: ada.as, params: { invite_as: 400, stream_ids: [] } }));
    const to = newAddress();
    const page = await t.call("POST", new URL(invite_link).pathname, { params: { email: to } });
    expect(page.status).toBe(200);
    expectHtmlPart(await catcher.waitFor(to), "/accounts/do_confirm_signup/", [ORG_NAME]);
  });

  it("password reset, and the mail to an address without an account there", async () => {
    expect((await t.call("POST", "/accounts/password/reset/", { params: { email: ada.email } })).status).toBe(200);
    expectHtmlPart(await catcher.waitFor(ada.email, (m) => m.subject.startsWith("Reset your password")), "/accounts/password/reset/", [ORG_NAME]);
    // Asked on another organization's host, the mail names the organization where it has one.
    const email = org.member.email;
    expect((await t.call("POST", "/accounts/password/reset/", { params: { email }, headers: orgHost(other) })).status).toBe(200);
    expectHtmlPart(await catcher.waitFor(email, (m) => m.subject === "Password reset request"), "/", [ORG_NAME]);
  });

  it("email change: the confirmation to the new address, then the notice to the old one", async () => {
    const old = org.member2.email;
    const to = newAddress();
    await t.ok(await t.call("PATCH", "/settings", { as: org.member2.as, params: { email: to } }));
    const confirm = await catcher.waitFor(to);
    expectHtmlPart(confirm, "/accounts/confirm_new_email/", [ORG_NAME]);
    const done = await t.call("POST", `/accounts/confirm_new_email/${keyIn(confirm.text, "/accounts/confirm_new_email/")}`);
    expect(done.status).toBe(200);
    expectHtmlPart(await catcher.waitFor(old), "/", [ORG_NAME]);
  });

  it("deactivation notice, with the administrator's comment", async () => {
    const comment = "Bye <b>& thanks\nfor <i>everything</i>";
    await t.ok(await t.call("DELETE", `/users/${org.guest.user_id}`, { as: ada.as, params: { deactivation_notification_comment: comment } }));
    const mail = await catcher.waitFor(org.guest.email);
    expectHtmlPart(mail, "/", [USER_NAME, ORG_NAME, comment]);
    expect(mail.html).not.toContain("<i>");
  });

  it("new-login notice, with the device the User-Agent names", async () => {
    t.clock.advance(120_000);
    const login = await t.call("POST", "/fetch_api_key", { params: { username: ada.email, password: "ada-pass-123" }, headers: { "user-agent": "Evil<b>&Client/1.0 (X11; Linux)" } });
    expect(login.status).toBe(200);
    const mail = await catcher.waitFor(ada.email, (m) => m.subject.startsWith("New login"));
    expectHtmlPart(mail, "/accounts/password/reset/", [ORG_NAME, "Evil<b>&Client on Linux"]);
  });
});
