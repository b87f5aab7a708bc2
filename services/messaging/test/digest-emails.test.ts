import { InternalGetDigestRecipients } from "@chat/contracts";
import { organizationUrl } from "@chat/platform";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doSendDigestEmails } from "../src/actions/digest-emails";
import { digestWeekday } from "../src/lib/digest-email";
import { SPOILER_NOTE } from "../src/lib/email-html";
import { startMessaging, type TestUser } from "./helpers";

/**
 * Weekly digest emails in-process against a real database and accounts, the clock manual: the
 * weekday, inactivity and once-a-week rules, and what a digest tells. Users who never reported
 * presence count as away; every user of a fresh organization joined just now.
 */

const DAY = 24 * 3600 * 1000;
let t: Awaited<ReturnType<typeof startMessaging>>;

beforeAll(async () => {
  t = await startMessaging();
}, 120_000);
afterAll(async () => t?.close());

async function mailsTo(user: TestUser): Promise<Array<{ subject: string; text: string; from_name: string }>> {
  const { rows } = await t.deps.pool.query("SELECT subject, text_body AS text, from_name FROM mail_outbox WHERE lower(to_address) = lower($1) ORDER BY id", [user.email]);
  return rows;
}

/** An organization with digests on today's weekday (or `weekday`). */
async function digestOrg(weekday = digestWeekday(t.clock.now())) {
  const org = await t.createOrg();
  await t.setRealmSetting(org.realmId, "digest_emails_enabled", true);
  await t.setRealmSetting(org.realmId, "digest_weekday", weekday);
  return org;
}

const accountsCall = () => serviceClient(t.accountsApp, t.deps.config.INTERNAL_TOKEN);

/** Accounts' digest recipients for today, asked as messaging does (`limit` a page). */
async function recipientsPage(params: Record<string, unknown>) {
  const now = Math.floor(t.clock.now().getTime() / 1000);
  return accountsCall()("GET", InternalGetDigestRecipients.path, {
    params: { weekday: digestWeekday(t.clock.now()), inactive_since: now - 5 * 86400, joined_since: now - 7 * 86400, ...params },
  });
}

/** Every page of accounts' answer, each checked against the contract; the users in order. */
async function recipientPages(limit: number) {
  const users: Array<{ realm_id: number; user_id: number; new_users: number }> = [];
  for (let after = 0; ; ) {
    const res = await recipientsPage({ after_user_id: after, limit });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const page = InternalGetDigestRecipients.response.parse((({ result, msg, ...rest }) => rest)(res.body as Record<string, unknown>)).users;
    expect(page.length).toBeLessThanOrEqual(limit);
    users.push(...page);
    if (page.length < limit) return users;
    after = page[page.length - 1].user_id;
  }
}

async function setActive(user: TestUser, at: Date) {
  await t.accountsPool.query(
    `INSERT INTO user_presence (user_id, realm_id, last_active_time, last_connected_time, last_update_id) VALUES ($1, $2, $3, $3, 1)
     ON CONFLICT (user_id) DO UPDATE SET last_active_time = $3, last_connected_time = $3`,
    [user.user_id, user.realm_id, at],
  );
}

describe("digest emails", () => {
  it("an away user gets one digest of the hot conversations, new channels and new people; active or opted-out users get none", async () => {
    const org = await digestOrg();
    const { member, member2, admin, moderator, owner, guest } = org;
    const channelId = await t.createStream(admin, "design", [admin, member, member2, moderator, guest]);
    await t.createStream(admin, "quiet", [admin]);
    await t.createStream(admin, "secret", [admin], { invite_only: true });
    for (let i = 1; i <= 3; i++) await t.send(member2, { type: "stream", to: "design", topic: "logo", content: `Logo idea **${i}**` });
    await t.send(admin, { type: "stream", to: "design", topic: "logo", content: "I like the second." });
    await t.send(admin, { type: "stream", to: "design", topic: "colors", content: "Blue?" });
    await t.send(org.bot, { type: "stream", to: "design", topic: "bot chatter", content: "beep" });
    // Active three days ago: not away long enough. Opted out: none either.
    await setActive(moderator, new Date(t.clock.now().getTime() - 3 * DAY));
    await t.accountsPool.query(
      `INSERT INTO user_settings (user_id, realm_id, settings) VALUES ($1, $2, '{"enable_digest_emails": false}')
       ON CONFLICT (user_id) DO UPDATE SET settings = user_settings.settings || EXCLUDED.settings`,
      [owner.user_id, owner.realm_id],
    );

    // Accounts' answer, as its contract declares it (no undeclared key).
    const due = (await recipientPages(1000)).filter((u) => u.realm_id === org.realmId);
    expect(due.map((u) => u.user_id).sort()).toEqual([admin, member, member2, guest].map((u) => u.user_id).sort());

    await doSendDigestEmails(t.deps);

    const [mail, ...more] = await mailsTo(member);
    expect(more).toEqual([]);
    expect(mail.subject).toBe(`Org ${org.slug} weekly digest`);
    expect(mail.from_name).toBe(`Org ${org.slug}`);
    expect(mail.text).toContain("Hello Mel Member,");
    expect(mail.text).toContain("#design > logo (4 messages, 2 people)");
    expect(mail.text).toContain("  Max Member:\n    Logo idea 1");
    expect(mail.text).toContain("Logo idea 2");
    expect(mail.text).not.toContain("Logo idea 3");
    expect(mail.text).toContain("… and 2 more messages");
    expect(mail.text).toMatch(new RegExp(`https?://\\S+/#narrow/channel/${channelId}-design/topic/logo\\n`));
    expect(mail.text).toContain("#design > colors (1 message, 1 person)");
    // Bots' messages are no conversation; the channel list names what the user may see.
    expect(mail.text).not.toContain("bot chatter");
    expect(mail.text).toMatch(new RegExp(`#quiet: https?://\\S+/#narrow/channel/\\d+-quiet\\n`));
    expect(mail.text).not.toContain("secret");
    // Olivia, Adam, Mona, Max, Gus (not Mel herself, nor the bot).
    expect(mail.text).toContain("5 new people joined");
    expect(mail.text).toContain("/#settings/notifications");
    expect(mail.text.indexOf("#design > logo")).toBeLessThan(mail.text.indexOf("#design > colors"));

    // A guest sees the channels they are in, not the public ones they cannot browse.
    const [guestMail] = await mailsTo(guest);
    expect(guestMail.text).toContain("#design > logo");
    expect(guestMail.text).not.toContain("#quiet");

    expect(await mailsTo(moderator)).toEqual([]);
    expect(await mailsTo(owner)).toEqual([]);
    expect(await mailsTo(org.bot)).toEqual([]);
  });

  it("the HTML part: the text's lists, escaped, the conversations and channels as links", async () => {
    const org = await digestOrg();
    const accounts = serviceClient(t.accountsApp, t.deps.config.INTERNAL_TOKEN);
    await t.ok(await accounts("PATCH", "/realm", { as: org.owner.as, params: { name: `R&D <${org.slug}>` } }));
    const realmUrl = organizationUrl(t.deps.config, org.slug);
    const channelId = await t.createStream(org.admin, "r&d", [org.admin, org.member]);
    const newId = await t.createStream(org.admin, "<new> & shiny", [org.admin]);
    await t.send(org.admin, { type: "stream", to: "r&d", topic: "<b>launch</b> & plans", content: "A **bold** idea <script>" });
    await doSendDigestEmails(t.deps);

    const { rows } = await t.deps.pool.query("SELECT text_body, html_body FROM mail_outbox WHERE lower(to_address) = lower($1)", [org.member.email]);
    expect(rows).toHaveLength(1);
    const html: string = rows[0].html_body;
    expect(html).toContain("Hello Mel Member,");
    expect(html).toContain(`what happened in R&amp;D &lt;${org.slug}&gt; while you were away`);
    const topicUrl = `${realmUrl}/#narrow/channel/${channelId}-r.26d/topic/.3Cb.3Elaunch.3C.2Fb.3E.20.26.20plans`;
    expect(rows[0].text_body).toContain(topicUrl);
    expect(html).toContain(`<a href="${topicUrl}">#r&amp;d &gt; &lt;b&gt;launch&lt;/b&gt; &amp; plans</a></b> (1 message, 1 person)`);
    expect(html).toContain("<b>Adam Admin</b>:<br>A bold idea &lt;script&gt;");
    expect(html).toMatch(new RegExp(`<li><a href="${realmUrl}/#narrow/channel/${newId}-[^"]+">#&lt;new&gt; &amp; shiny</a></li>`));
    expect(html).toContain(`<a href="${realmUrl}/#settings/notifications">`);
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<b>launch");
  });

  it("a teaser with a spoiler keeps its header and leaves the hidden content out, in both parts", async () => {
    const org = await digestOrg();
    await t.createStream(org.admin, "films", [org.admin, org.member]);
    await t.send(org.admin, { type: "stream", to: "films", topic: "mystery", content: "```spoiler Who did it\nThe butler did it.\n```" });
    await doSendDigestEmails(t.deps);

    const { rows } = await t.deps.pool.query("SELECT text_body, html_body FROM mail_outbox WHERE lower(to_address) = lower($1)", [org.member.email]);
    expect(rows).toHaveLength(1);
    expect(rows[0].text_body).toContain(`Who did it ${SPOILER_NOTE}`);
    expect(rows[0].html_body).toContain(`Who did it ${SPOILER_NOTE}`);
    expect(rows[0].text_body).not.toContain("butler");
    expect(rows[0].html_body).not.toContain("butler");
  });

  it("once a week: not again that day, nor on other days, again on next week's digest day", async () => {
    const start = t.clock.now();
    const org = await digestOrg();
    await t.createStream(org.admin, "weekly", [org.admin, org.member]);
    await t.send(org.admin, { type: "stream", to: "weekly", topic: "plans", content: "Week one" });
    // Two processes at once (replicas): one claims the user's digest.
    await Promise.all([doSendDigestEmails(t.deps), doSendDigestEmails(t.deps)]);
    await doSendDigestEmails(t.deps);
    expect(await mailsTo(org.member)).toHaveLength(1);

    t.clock.advance(DAY);
    await t.send(org.admin, { type: "stream", to: "weekly", topic: "plans", content: "Day two" });
    await doSendDigestEmails(t.deps);
    expect(await mailsTo(org.member)).toHaveLength(1);

    try {
      t.clock.set(new Date(start.getTime() + 7 * DAY));
      await t.send(org.admin, { type: "stream", to: "weekly", topic: "plans", content: "Week two" });
      await doSendDigestEmails(t.deps);
      const mails = await mailsTo(org.member);
      expect(mails).toHaveLength(2);
      // The past week only: the new people joined more than a week ago now.
      expect(mails[1].text).toContain("#weekly > plans (2 messages, 1 person)");
      expect(mails[1].text).toContain("Day two");
      expect(mails[1].text).not.toContain("Week one");
      expect(mails[1].text).not.toContain("joined");
    } finally {
      t.clock.set(start);
    }
  });

  it("accounts answers a page at a time: each user once, in order of id, at most `limit` a page; a bad page is refused", async () => {
    const org = await digestOrg();
    for (let i = 1; i <= 3; i++) await org.extra(i);
    const whole = await recipientPages(1000);
    const paged = await recipientPages(2);
    expect(paged).toEqual(whole);
    const ids = paged.map((u) => u.user_id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    // The organization's nine humans, none active: each counts the eight others as new.
    const own = paged.filter((u) => u.realm_id === org.realmId);
    expect(own).toHaveLength(9);
    expect(own.map((u) => u.new_users)).toEqual(Array(9).fill(8));

    const bad: Array<[unknown, string]> = [
      ["many", "limit is not valid JSON"],
      [0, "limit is too small"],
      [1001, "limit is too large"],
    ];
    for (const [limit, msg] of bad) {
      const res = await recipientsPage({ limit });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg });
    }
    const missing = await recipientsPage({});
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ result: "error", code: "REQUEST_VARIABLE_MISSING", msg: "Missing 'limit' argument" });
  });

  it("an organization of more users than a page: every away user gets exactly one digest, also with two processes walking at once", async () => {
    const org = await digestOrg();
    const extras = [];
    for (let i = 1; i <= 3; i++) extras.push(await org.extra(i));
    const humans = [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest, ...extras];
    await t.createStream(org.admin, "paged", humans);
    await t.send(org.admin, { type: "stream", to: "paged", topic: "pages", content: "One digest each" });
    await setActive(org.moderator, new Date(t.clock.now().getTime() - DAY));

    await Promise.all([doSendDigestEmails(t.deps, 2), doSendDigestEmails(t.deps, 3)]);
    await doSendDigestEmails(t.deps, 2);
    for (const user of humans.filter((u) => u !== org.moderator)) {
      const mails = await mailsTo(user);
      expect(mails, user.email).toHaveLength(1);
      expect(mails[0].text).toContain("#paged > pages (1 message, 1 person)");
      expect(mails[0].text).toContain("8 new people joined");
    }
    expect(await mailsTo(org.moderator)).toEqual([]);
  });

  it("covers only the time since the user's last activity", async () => {
    const org = await digestOrg();
    await t.createStream(org.admin, "since", [org.admin, org.member]);
    t.clock.advance(-6 * DAY);
    try {
      await t.send(org.admin, { type: "stream", to: "since", topic: "old", content: "Before you left" });
    } finally {
      t.clock.advance(6 * DAY);
    }
    await setActive(org.member, new Date(t.clock.now().getTime() - 5.5 * DAY));
    await t.send(org.admin, { type: "stream", to: "since", topic: "new", content: "After you left" });
    await doSendDigestEmails(t.deps);
    const [mail] = await mailsTo(org.member);
    expect(mail.text).toContain("#since > new");
    expect(mail.text).not.toContain("#since > old");
  });

  it("no digest in organizations with digests off, on another weekday, nor when there is nothing to tell", async () => {
    const off = await t.createOrg();
    await t.setRealmSetting(off.realmId, "digest_weekday", digestWeekday(t.clock.now()));
    const otherDay = await digestOrg((digestWeekday(t.clock.now()) + 1) % 7);
    for (const org of [off, otherDay]) {
      await t.createStream(org.admin, "news", [org.admin, org.member]);
      await t.send(org.admin, { type: "stream", to: "news", topic: "t", content: "hello" });
    }
    await doSendDigestEmails(t.deps);
    expect(await mailsTo(off.member)).toEqual([]);
    expect(await mailsTo(otherDay.member)).toEqual([]);

    // A week later the organization's users are not new and nothing was said: no mail, but the
    // week's digest is done (not looked at again that day).
    const start = t.clock.now();
    try {
      t.clock.set(new Date(start.getTime() + 8 * DAY));
      await doSendDigestEmails(t.deps);
      expect(await mailsTo(otherDay.member)).toEqual([]);
      const { rows } = await t.deps.pool.query("SELECT mailed FROM digest_emails WHERE user_id = $1", [otherDay.member.user_id]);
      expect(rows).toEqual([{ mailed: false }]);
    } finally {
      t.clock.set(start);
    }
  });
});
