import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, browse as browsePage, mailLink, runDemo, startMailCatcher, startStack, type DemoOutput, type DemoUser, type MailCatcher, type Stack } from "@chat/testkit";
import { NO_RATE_LIMITS, nextEvent, ok, refused, register, until } from "@chat/testkit/e2e";

/**
 * Changing one's email address through the gateway, as Zulip does it: PATCH /settings `email`
 * mails a link to the new address (a real SMTP server, the test's catcher); the link's page
 * asks, and only its button changes the address; the old address gets a notice; clients get
 * realm_user updates; the old address stops authenticating while the API key stays.
 */

let stack: Stack;
let demo: DemoOutput;
let catcher: MailCatcher;

beforeAll(async () => {
  catcher = await startMailCatcher();
  stack = await startStack({ ...NO_RATE_LIMITS, env: { ...catcher.env, NOREPLY_EMAIL_ADDRESS: "noreply@chat.test" } });
  demo = await runDemo(stack, { viaPnpm: false });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await catcher?.close();
});

const org = () => demo.orgs[0];
const as = (u: Pick<DemoUser, "email" | "api_key">) => apiClient(demo.base_url, u.email, u.api_key);

let n = 0;
const newAddress = (who: string) => `${who}-${++n}-${Date.now()}@example.com`;
const LINK_PATH = "/accounts/confirm_new_email/";

/** The path of a mail's link to `path`, for `browse`. */
const linkIn = (text: string, path: string) => mailLink(text, path).path;
/** A browser's GET of the page, or the POST its button makes, through the gateway. */
const browse = (path: string, post = false) => browsePage(stack.baseUrl, path, post ? { form: {} } : {});

/** Asks for the change and returns the path of the link mailed to the new address (the mail names the old one). */
async function requestChange(user: Pick<DemoUser, "email" | "api_key">, to: string): Promise<string> {
  expect(ok(await as(user).patch("/settings", { email: to })).account_email).toBe("Check your email for a confirmation link.");
  return linkIn((await catcher.waitFor(to, (m) => m.text.includes(user.email))).text, LINK_PATH);
}

describe("PATCH /settings email, then the link", () => {
  it("mails a link to the new address; the page changes nothing; its button changes the address, events and credentials follow", async () => {
    const member = org().users.member;
    const oldEmail = member.email;
    const observer = await register(as(org().users.owner), { event_types: ["realm_user"] });
    const otherOrg = await register(as(demo.orgs[1].users.owner), { event_types: ["realm_user", "user_settings"] });

    const to = newAddress("member");
    const res = await as(member).patch("/settings", { email: `  ${to} ` });
    expect(res.body).toEqual({ result: "success", msg: "", account_email: "Check your email for a confirmation link." });
    const mail = await catcher.waitFor(to);
    expect(mail.from).toBe("noreply@chat.test");
    expect(mail.fromName).toContain("account security");
    expect(mail.text).toContain(oldEmail);
    expect(mail.text).toContain("24 hours");
    const path = linkIn(mail.text, LINK_PATH);
    expect(path).toMatch(/^\/accounts\/confirm_new_email\/[A-Za-z0-9_-]{20,}$/);

    // Opening the link (as a mail scanner would, twice) only asks.
    for (let i = 0; i < 2; i++) {
      const page = await browse(path);
      expect(page.status).toBe(200);
      expect(page.type).toBe("text/html; charset=utf-8");
      expect(page.headers["cache-control"]).toBe("no-store");
      expect(page.text).toContain(oldEmail);
      expect(page.text).toContain(to);
      expect(page.text).toMatch(/<form method="post">/);
    }
    expect(ok(await as(member).get("/users/me"))).toMatchObject({ email: oldEmail, delivery_email: oldEmail });

    const done = await browse(path, true);
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain(to);

    // Zulip's do_change_user_delivery_email: the delivery email, the Gravatar that follows it, the public API email.
    expect(await nextEvent(observer)).toEqual({ type: "realm_user", op: "update", person: { user_id: member.user_id, delivery_email: to } });
    const avatar = await nextEvent(observer);
    expect(avatar).toMatchObject({ type: "realm_user", op: "update", person: { user_id: member.user_id } });
    expect(avatar.person.avatar_url).toContain("gravatar.com");
    expect(await nextEvent(observer)).toEqual({ type: "realm_user", op: "update", person: { user_id: member.user_id, new_email: to } });

    // The same API key works with the new address only (once the gateway's cache heard of it).
    const renamed = { email: to, api_key: member.api_key };
    expect(ok(await as(renamed).get("/users/me"))).toMatchObject({ user_id: member.user_id, email: to, delivery_email: to });
    await until("the old address to stop authenticating", async () => (await as(member).get("/users/me")).status === 401);
    const login = await as(member).get("/users/me");
    expect(login.body).toMatchObject({ result: "error", code: "UNAUTHORIZED" });

    const notice = await catcher.waitFor(oldEmail);
    expect(notice.subject).toContain("changed");
    expect(notice.text).toContain(to);
    expect(notice.text).not.toContain(LINK_PATH);

    // The key works once.
    for (const again of [await browse(path), await browse(path, true)]) {
      expect(again.status).toBe(404);
      expect(again.text).toContain("expired");
    }

    // Another organization saw nothing: its next event is its own marker.
    ok(await as(demo.orgs[1].users.owner).patch("/settings", { enter_sends: true }));
    expect(await nextEvent(otherOrg)).toMatchObject({ type: "user_settings", op: "update", property: "enter_sends" });
  });

  it("an address not visible to everyone: only those who may see it get it, and the API email stays the dummy one", async () => {
    const { owner, admin, member2 } = org().users;
    ok(await as(owner).patch("/settings", { email_address_visibility: 3 }));
    const dummy = ok(await as(owner).get("/users/me")).email;
    expect(dummy).toMatch(/\.invalid$/);
    const seer = await register(as(admin), { event_types: ["realm_user", "user_settings"] });
    const other = await register(as(member2), { event_types: ["realm_user", "user_settings"] });

    const to = newAddress("owner");
    expect((await browse(await requestChange(owner, to), true)).status).toBe(200);
    expect(await nextEvent(seer)).toEqual({ type: "realm_user", op: "update", person: { user_id: owner.user_id, delivery_email: to } });
    expect((await nextEvent(seer)).person).toHaveProperty("avatar_url");
    expect((await nextEvent(other)).person).toHaveProperty("avatar_url");
    // No new_email to anyone: the next events are the markers.
    ok(await as(admin).patch("/settings", { enter_sends: true }));
    ok(await as(member2).patch("/settings", { enter_sends: true }));
    expect(await nextEvent(seer)).toMatchObject({ type: "user_settings", property: "enter_sends" });
    expect(await nextEvent(other)).toMatchObject({ type: "user_settings", property: "enter_sends" });

    // Logging in by the delivery address: the new one now, with the same key.
    expect(ok(await as({ email: to, api_key: owner.api_key }).get("/users/me"))).toMatchObject({ email: dummy, delivery_email: to });
    await until("the old address to stop authenticating", async () => (await as(owner).get("/users/me")).status === 401);
  });

  it("the same address as now does nothing and mails nobody", async () => {
    const member2 = org().users.member2;
    expect((await as(member2).patch("/settings", { email: member2.email })).body).toEqual({ result: "success", msg: "" });
    await expect(catcher.waitFor(member2.email, undefined, 1500)).rejects.toThrow(/no mail/);
  });

  it("an unknown key is the expired page", async () => {
    const page = await browse(`${LINK_PATH}not-a-real-key`);
    expect(page.status).toBe(404);
    expect(page.type).toBe("text/html; charset=utf-8");
    expect(page.text).toContain("expired");
    expect((await browse(`${LINK_PATH}not-a-real-key`, true)).status).toBe(404);
  });

  it("an address taken meanwhile: the page says so and nothing changes", async () => {
    const { moderator, guest } = org().users;
    const wanted = newAddress("wanted");
    const moderatorLink = await requestChange(moderator, wanted);
    const guestLink = await requestChange(guest, wanted);
    expect((await browse(moderatorLink)).status).toBe(200);
    expect((await browse(guestLink, true)).status).toBe(200);

    for (const page of [await browse(moderatorLink), await browse(moderatorLink, true)]) {
      expect(page.status).toBe(400);
      expect(page.text).toContain("Email is already in use.");
      expect(page.text).toContain(moderator.email);
    }
    expect(ok(await as(moderator).get("/users/me"))).toMatchObject({ delivery_email: moderator.email });
    // Asking for it now is refused at once.
    refused(await as(moderator).patch("/settings", { email: wanted }), "Email is already in use.");
  });
});

describe("PATCH /settings email refusals", () => {
  it("bots may not use it", async () => {
    refused(await as(org().users.bot).patch("/settings", { email: newAddress("bot") }), "This endpoint does not accept bot requests.");
  });

  it("invalid, refused by the organization's rules, or in use: Zulip's texts, and nothing is mailed", async () => {
    const member2 = org().users.member2;
    refused(await as(member2).patch("/settings", { email: "not-an-address" }), "Invalid address.");
    refused(await as(member2).patch("/settings", { email: "someone@mailinator.com" }), "Please use your real email address.");
    refused(await as(member2).patch("/settings", { email: org().users.admin.email.toUpperCase() }), "Email is already in use.");
    // One's own address in other letters is found as one's own, as Zulip looks it up.
    refused(await as(member2).patch("/settings", { email: member2.email.toUpperCase() }), "Email is already in use.");
    // Another organization's address is free here.
    const elsewhere = demo.orgs[1].users.member.email;
    ok(await as(member2).patch("/settings", { email: elsewhere }));
    await catcher.waitFor(elsewhere, (m) => m.text.includes(LINK_PATH));
    // Refused requests queue no mail (their transaction is rolled back).
    expect(catcher.mails.filter((m) => ["not-an-address", "someone@mailinator.com"].includes(m.to) || m.to === org().users.admin.email)).toEqual([]);
  });

  it("with email changes disabled only administrators may ask", async () => {
    const { admin, member2 } = org().users;
    ok(await as(admin).patch("/realm", { email_changes_disabled: true }));
    try {
      refused(await as(member2).patch("/settings", { email: newAddress("member2") }), "Email address changes are disabled in this organization.");
      const to = newAddress("admin");
      await requestChange(admin, to);
    } finally {
      ok(await as(admin).patch("/realm", { email_changes_disabled: false }));
    }
  });

  it("past 2 requests an hour: Zulip's rate-limit error (refused requests do not count)", async () => {
    const member2 = org().users.member2;
    // member2's refusals above did not count; its one request did.
    await requestChange(member2, newAddress("member2"));
    const res = await as(member2).patch("/settings", { email: newAddress("member2") });
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ result: "error", code: "RATE_LIMIT_HIT", msg: "API usage exceeded rate limit" });
    expect(res.body["retry-after"]).toBeGreaterThan(3500);
    expect(res.body["retry-after"]).toBeLessThanOrEqual(3600);
    expect(Number(res.headers["retry-after"])).toBe(res.body["retry-after"]);
  });
});
