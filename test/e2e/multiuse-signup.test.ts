import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browse as browsePage, mailLink, apiClient, runDemo, startMailCatcher, startStack, type DemoOutput, type MailCatcher, type Stack } from "@chat/testkit";

/**
 * The pages behind a reusable invitation link, driven through the gateway as a browser would:
 * `/join/{key}/` asks for an address, the address is mailed a confirmation link (to a real SMTP
 * server, the test's catcher), and that link's form creates the account with the link's role
 * and channels.
 */

let stack: Stack;
let demo: DemoOutput;
let catcher: MailCatcher;

beforeAll(async () => {
  catcher = await startMailCatcher();
  // Each page comes from a client address of its own behind a trusted proxy (see browse).
  stack = await startStack({ env: { ...catcher.env, NOREPLY_EMAIL_ADDRESS: "noreply@chat.test", TRUST_PROXY_HOPS: "1" } });
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
let clients = 0;
/**
 * A browser's GET, or POST of the page's form, through the gateway, each from a client network
 * of its own (an IPv6 /64): one network gets 5 mails a day (Zulip's sends_email_by_ip).
 */
const browse = (path: string, form?: Record<string, string>) =>
  browsePage(stack.baseUrl, path, { form, headers: { "x-forwarded-for": `2001:db8:${(++clients).toString(16)}::1` } });

let n = 0;
const newAddress = () => `joiner${++n}-${Date.now()}@example.com`;

/** A new reusable link made by the administrator: its path (`/join/{key}/`) and id. */
async function createLink(params: Record<string, unknown> = {}) {
  const res = await as("admin").post("/invites/multiuse", { invite_as: 400, stream_ids: "[]", ...params });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const url: string = res.body.invite_link;
  const invites = (await as("admin").get("/invites")).body.invites as Array<{ id: number; link_url?: string }>;
  return { path: new URL(url).pathname, id: invites.find((i) => i.link_url === url)!.id };
}

/** Gives an address on a link's page and returns the confirmation link it is mailed. */
async function requestSignup(joinPath: string, email: string): Promise<string> {
  const page = await browse(joinPath, { email });
  expect(page.status, page.text).toBe(200);
  expect(page.text).toContain("Check your email");
  return linkIn((await catcher.waitFor(email)).text, "/accounts/do_confirm_signup/");
}

const mailsTo = (email: string) => catcher.mails.filter((m) => m.to.toLowerCase() === email.toLowerCase());

describe("the reusable link's page", () => {
  it("asks for an address, naming the organization, with and without the trailing slash", async () => {
    const { path } = await createLink();
    expect(path).toMatch(/^\/join\/[a-z0-9]+\/$/);
    for (const p of [path, path.slice(0, -1)]) {
      const page = await browse(p);
      expect(page.status).toBe(200);
      expect(page.type).toBe("text/html; charset=utf-8");
      expect(page.headers["cache-control"]).toBe("no-store");
      expect(page.text).toContain(org().name);
      expect(page.text).toMatch(/<form method="post">/);
      expect(page.text).toContain('name="email"');
    }
  });

  it("an unknown key is the expired page", async () => {
    for (const p of ["/join/nosuchkey/", "/join/nosuchkey"]) {
      const page = await browse(p);
      expect(page.status).toBe(404);
      expect(page.type).toBe("text/html; charset=utf-8");
      expect(page.text).toContain("expired");
    }
    expect((await browse("/join/nosuchkey/", { email: newAddress() })).status).toBe(404);
  });
});

describe("signing up through the link", () => {
  it("mails a confirmation link whose form creates the account with the link's role and channels", async () => {
    const admin = as("admin");
    const created = await admin.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: `joiners default ${Date.now()}` }]) });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const subs = (await admin.get("/users/me/subscriptions")).body.subscriptions as Array<{ stream_id: number; name: string }>;
    const defaultChannel = subs.find((s) => s.name.startsWith("joiners default"))!.stream_id;
    expect((await admin.post("/default_streams", { stream_id: defaultChannel })).status).toBe(200);
    const linkChannel = org().channels.public.stream_id;
    const { path } = await createLink({ invite_as: 300, stream_ids: JSON.stringify([linkChannel]), include_realm_default_subscriptions: true });

    const email = newAddress();
    // Sent to the path without the slash: the same form.
    const sent = await browse(path.slice(0, -1), { email });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.text).toContain("Check your email");
    expect(sent.text).toContain(email);
    const mail = await catcher.waitFor(email);
    expect(mail.from).toBe("noreply@chat.test");
    expect(mail.subject).toContain(org().name);
    expect(mail.text).toContain("24 hours");
    const confirm = linkIn(mail.text, "/accounts/do_confirm_signup/");
    expect(confirm).toMatch(/^\/accounts\/do_confirm_signup\/[A-Za-z0-9_-]{20,}$/);

    const form = await browse(confirm);
    expect(form.status).toBe(200);
    expect(form.headers["cache-control"]).toBe("no-store");
    expect(form.text).toContain(email);
    expect(form.text).toContain('name="full_name"');
    const done = await browse(confirm, { full_name: "Jo Joiner", password: "a long password" });
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain("is ready");

    const login = await apiClient(demo.base_url).post("/fetch_api_key", { username: email, password: "a long password" });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const me = apiClient(demo.base_url, email, login.body.api_key);
    expect((await me.get("/users/me")).body).toMatchObject({ full_name: "Jo Joiner", role: 300, email });
    // The channels are subscribed by accounts' consumer of the acceptance, after the page answered.
    let streamIds: number[] = [];
    for (let i = 0; i < 100 && !(streamIds.includes(linkChannel) && streamIds.includes(defaultChannel)); i++) {
      const res = await me.get("/users/me/subscriptions");
      expect(res.status).toBe(200);
      streamIds = res.body.subscriptions.map((s: { stream_id: number }) => s.stream_id);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(streamIds).toEqual(expect.arrayContaining([linkChannel, defaultChannel]));
    expect(streamIds).not.toContain(org().channels.private.stream_id);

    // The confirmation made one account; the reusable link still works for others.
    for (const again of [await browse(confirm), await browse(confirm, { full_name: "Someone Else", password: "another password" })]) {
      expect(again.status).toBe(404);
      expect(again.text).toContain("expired");
    }
    expect((await browse(path)).status).toBe(200);
  });

  it("an address with an account is pointed to logging in; a deactivated one is told so; neither is mailed", async () => {
    const { path } = await createLink();
    const member = org().users.member;
    const existing = await browse(path, { email: member.email.toUpperCase() });
    expect(existing.status).toBe(400);
    expect(existing.text).toContain("already has an account");
    expect(existing.text).toMatch(/Log in at <a href="https?:\/\/[^"]+">/);

    const gone = org().users.member2;
    expect((await as("admin").delete(`/users/${gone.user_id}`)).status).toBe(200);
    const deactivated = await browse(path, { email: gone.email });
    expect(deactivated.status).toBe(400);
    expect(deactivated.text).toContain(`Your account ${gone.email} has been deactivated. Please contact your organization administrator to reactivate it.`);
    await new Promise((r) => setTimeout(r, 1500));
    expect(mailsTo(member.email.toUpperCase())).toEqual([]);
    expect(mailsTo(gone.email)).toEqual([]);
  });

  it("an invalid address shows the form again with the reason, escaping what was typed, and mails nothing", async () => {
    const { path } = await createLink();
    const typed = `"><script>alert(1)</script>`;
    const invalid = await browse(path, { email: typed });
    expect(invalid.status).toBe(400);
    expect(invalid.text).toContain("Enter a valid email address.");
    expect(invalid.text).toContain("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(invalid.text).not.toContain("<script>");
    // The organization's rules on addresses (disposable ones refused, Zulip's default).
    const disposable = await browse(path, { email: `someone${Date.now()}@mailinator.com` });
    expect(disposable.status).toBe(400);
    expect(disposable.text).toContain("Please use your real email address.");
  });

  it("the sign-up form shows again with what was wrong, escaped, and keeps the confirmation usable", async () => {
    const { path } = await createLink();
    const email = newAddress();
    const confirm = await requestSignup(path, email);
    const weak = await browse(confirm, { full_name: "Short <b>Pass</b>", password: "abc" });
    expect(weak.status).toBe(400);
    expect(weak.text).toContain("The password is too weak.");
    expect(weak.text).toContain("Short &lt;b&gt;Pass&lt;/b&gt;");
    // A name the account's checks refuse (too short) comes back from the sign-up itself.
    const short = await browse(confirm, { full_name: "J", password: "a long password" });
    expect(short.status).toBe(400);
    expect((await browse(confirm)).status).toBe(200);
    expect((await browse(confirm, { full_name: "Jay Later", password: "a long password" })).status).toBe(200);
  });
});

describe("a revoked link", () => {
  it("is dead at its first page and at the confirmation form, and creates no account", async () => {
    const { path, id } = await createLink();
    const email = newAddress();
    const confirm = await requestSignup(path, email);
    expect((await browse(confirm)).status).toBe(200);
    expect((await as("admin").delete(`/invites/multiuse/${id}`)).status).toBe(200);

    for (const page of [await browse(path), await browse(path, { email: newAddress() }), await browse(confirm)]) {
      expect(page.status).toBe(404);
      expect(page.text).toContain("expired");
    }
    const sent = await browse(confirm, { full_name: "Too Late", password: "a long password" });
    expect(sent.status).toBe(404);
    const login = await apiClient(demo.base_url).post("/fetch_api_key", { username: email, password: "a long password" });
    expect(login.status).toBe(401);
  });
});

describe("the mails per address", () => {
  it("are at most 5 a day; a 6th request is refused without a mail, and other addresses are not affected", async () => {
    const { path } = await createLink();
    const email = newAddress();
    for (let i = 0; i < 5; i++) await requestSignup(path, email);
    await catcher.waitFor(email, () => mailsTo(email).length === 5);
    const sixth = await browse(path, { email: email.toUpperCase() });
    expect(sixth.status).toBe(429);
    expect(sixth.text).toContain("Too many confirmation mails");
    await new Promise((r) => setTimeout(r, 1500));
    expect(mailsTo(email)).toHaveLength(5);
    const other = newAddress();
    await requestSignup(path, other);
  });
});
