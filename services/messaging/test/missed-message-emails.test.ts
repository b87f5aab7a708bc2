import { InternalGetEmailNotificationState } from "@chat/contracts";
import { createLogger, createMemoryLogger, InternalClient, MailSender, organizationUrl } from "@chat/platform";
import { serviceClient, startMailCatcher, type CaughtMail, type MailCatcher } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doMailNextDueBatch, MISSED_MESSAGE_MAX_ATTEMPTS } from "../src/actions/missed-message-emails";
import type { AppDeps } from "../src/deps";
import { AccountsClient } from "../src/lib/accounts-client";
import { SPOILER_NOTE } from "../src/lib/email-html";
import { startMessaging, type TestUser } from "./helpers";

/**
 * Missed-message emails in-process against a real database and accounts, the clock manual, the
 * mails sent by the real mail sender to the testkit's SMTP catcher: the HTML part, the
 * organization's name in the subject, and the end of retries of a batch that keeps failing.
 * Users who never reported presence count as away; batches are due after Zulip's 120 s.
 */

const BATCH_MS = 121_000;
const RETRY_MS = 60_000;

let t: Awaited<ReturnType<typeof startMessaging>>;
let catcher: MailCatcher;
let sender: MailSender;
let accountsCall: ReturnType<typeof serviceClient>;

beforeAll(async () => {
  t = await startMessaging();
  catcher = await startMailCatcher();
  const config = { ...t.deps.config, EMAIL_HOST: "127.0.0.1", EMAIL_PORT: catcher.port, EMAIL_USE_TLS: false, EMAIL_POLL_SECONDS: 1 };
  sender = new MailSender({ pool: t.deps.pool, config, log: createLogger("test", "silent"), clock: t.clock });
  sender.start();
  accountsCall = serviceClient(t.accountsApp, t.deps.config.INTERNAL_TOKEN);
}, 120_000);

afterAll(async () => {
  await sender?.stop();
  await catcher?.close();
  await t?.close();
});

/** Lets the batches come due and mails every due one, as the job's pass does. */
async function mailDueBatches(deps: AppDeps = t.deps, advanceMs = BATCH_MS) {
  t.clock.advance(advanceMs);
  const skip: number[] = [];
  while (await doMailNextDueBatch(deps, skip)) {
    /* the next due user */
  }
}

const dm = (from: TestUser, to: TestUser, content: string) => t.send(from, { type: "direct", to: JSON.stringify([to.user_id]), content });

/** A user created through accounts (in `realmId`, with this address and name). */
async function createUser(realmId: number, email: string, fullName: string): Promise<TestUser> {
  const res = await t.ok(await accountsCall("POST", "/internal/users", { params: { realm_id: realmId, email, full_name: fullName, role: 400 } }));
  const u = { user_id: res.user_id as number, email: res.email as string, full_name: fullName, role: 400, realm_id: realmId };
  return { ...u, as: t.identity(u) };
}

async function setSetting(user: TestUser, name: string, value: unknown) {
  await t.ok(await accountsCall("PATCH", "/settings", { as: user.as, params: { [name]: value } }));
}

const mailTo = (user: TestUser, match: (m: CaughtMail) => boolean) => catcher.waitFor(user.email, match);

describe("missed-message emails: the HTML part", () => {
  it("has each message's rendered HTML, links and images absolute, the sender escaped; the text part stays text", async () => {
    const org = await t.createOrg();
    const realmUrl = organizationUrl(t.deps.config, org.slug);
    const eve = await createUser(org.realmId, `eve@${org.slug}.test`, "Eve <script & Co");
    const channelId = await t.createStream(org.admin, "design", [org.admin, org.member, eve]);
    const content = [
      "**Bold plan** for :zulip: :octopus:",
      "See [the report](/user_uploads/1/ab/report.pdf) and [the picture](/user_uploads/1/cd/logo.png) in #**design>logo**.",
    ].join("\n");
    await dm(eve, org.member, content);
    await mailDueBatches();

    const mail = await mailTo(org.member, (m) => m.subject === "DMs with Eve <script & Co");
    const html = mail.html!;
    expect(html).toContain("<strong>Bold plan</strong>");
    expect(html).toContain(`src="${realmUrl}/static/generated/emoji/images/emoji/unicode/zulip.png"`);
    expect(html).toContain("🐙");
    expect(html).toContain(`href="${realmUrl}/user_uploads/1/ab/report.pdf"`);
    expect(html).toContain(`href="${realmUrl}/user_uploads/1/cd/logo.png"`);
    expect(html).toContain(`href="${realmUrl}/#narrow/channel/${channelId}-design/topic/logo"`);
    // Nothing left relative; the upload's preview (it would need the reader's session) is left out.
    expect(html).not.toMatch(/(href|src)="(\/|#)/);
    expect(html).not.toContain("message_inline_image");
    // The sender's name, escaped; the conversation's link as the text part has it.
    expect(html).toContain("Eve &lt;script &amp; Co");
    expect(html).not.toContain("<script");
    expect(html).toContain(`href="${realmUrl}/#narrow/dm/${eve.user_id}-Eve-script-&amp;-Co"`);
    expect(html).toContain(`href="${realmUrl}/#settings/notifications"`);

    expect(mail.text).toContain("Bold plan for");
    expect(mail.text).not.toContain("<strong>");
    expect(mail.text).toContain(`${realmUrl}/#narrow/dm/${eve.user_id}-Eve-script-&-Co`);
  });

  it("a channel conversation's header and the organization's name are escaped", async () => {
    const org = await t.createOrg();
    await t.ok(await accountsCall("PATCH", "/realm", { as: org.owner.as, params: { name: `R&D <${org.slug}>` } }));
    await t.createStream(org.admin, "general", [org.admin, org.member]);
    const topic = "<b>launch</b> & plans";
    await t.send(org.admin, { type: "stream", to: "general", topic, content: `@**${org.member.full_name}** please look` });
    await mailDueBatches();

    const mail = await mailTo(org.member, (m) => m.subject === `#general > ${topic}`);
    expect(mail.html).toContain("#general &gt; &lt;b&gt;launch&lt;/b&gt; &amp; plans");
    expect(mail.html).toContain(`View or reply in R&amp;D &lt;${org.slug}&gt;`);
    expect(mail.html).not.toContain("<b>launch");
    expect(mail.html).toContain('<span class="user-mention"');
  });

  it("no content when the user or the organization hides it, as in the text part", async () => {
    const org = await t.createOrg();
    const realmUrl = organizationUrl(t.deps.config, org.slug);
    await setSetting(org.member2, "message_content_in_email_notifications", false);
    await dm(org.admin, org.member2, "the **secret** plan");
    await mailDueBatches();
    const hidden = await mailTo(org.member2, (m) => m.subject === `DMs with ${org.admin.full_name}`);
    expect(hidden.text).not.toContain("secret");
    expect(hidden.html).not.toContain("secret");
    expect(hidden.html).toContain(`You have 1 new message from ${org.admin.full_name}.`);
    expect(hidden.html).toContain("you turned it off in your email notification settings");
    expect(hidden.html).toContain(`href="${realmUrl}/#narrow/dm/${org.admin.user_id}-`);

    const strict = await t.createOrg();
    await t.setRealmSetting(strict.realmId, "message_content_allowed_in_email_notifications", false);
    await dm(strict.admin, strict.member, "the **hidden** agenda");
    await mailDueBatches();
    const banned = await mailTo(strict.member, (m) => m.subject === `DMs with ${strict.admin.full_name}`);
    expect(banned.text).not.toContain("hidden");
    expect(banned.html).not.toContain("hidden");
    expect(banned.html).toContain("your organization does not allow it in email notifications");
  });
});

describe("missed-message emails: spoilers", () => {
  it("keep their header and leave their hidden content out, in the text and the HTML part", async () => {
    const org = await t.createOrg();
    await t.createStream(org.admin, "films", [org.admin, org.member]);
    const content = ["Saw it last night.", "```spoiler How it **ends**", "The butler did it.", "```", "```spoiler", "The gardener helped.", "```"].join("\n");
    await t.send(org.admin, { type: "stream", to: "films", topic: "mystery", content: `@**${org.member.full_name}** ${content}` });
    await mailDueBatches();

    const mail = await mailTo(org.member, (m) => m.subject === "#films > mystery");
    expect(mail.text).toContain("Saw it last night.");
    expect(mail.text).toContain(`How it ends ${SPOILER_NOTE}`);
    expect(mail.html).toContain(`How it <strong>ends</strong> <em>${SPOILER_NOTE}</em>`);
    // The spoiler without a header: only the note.
    expect(mail.html).toContain(`<p><em>${SPOILER_NOTE}</em></p>`);
    for (const part of [mail.text, mail.html!]) {
      expect(part).not.toContain("butler");
      expect(part).not.toContain("gardener");
    }
  });
});

describe("missed-message emails: the organization's name in the subject", () => {
  it("automatic (the default): named when the address has an account in another organization, not otherwise; never wins", async () => {
    const org = await t.createOrg();
    const other = await t.createOrg();
    const gone = await t.createOrg();
    // The member's address has an account elsewhere; member2's only a deactivated one; the
    // moderator's one too, but the moderator asked never to have the name.
    await createUser(other.realmId, org.member.email, "Mel Elsewhere");
    await t.deactivate(await createUser(gone.realmId, org.member2.email, "Max Formerly"));
    await createUser(other.realmId, org.moderator.email, "Mona Elsewhere");
    await setSetting(org.moderator, "realm_name_in_email_notifications_policy", 3);

    const answer = await accountsCall("GET", InternalGetEmailNotificationState.path, {
      params: { realm_id: org.realmId, user_ids: [org.member.user_id, org.member2.user_id] },
    });
    expect(answer.status).toBe(200);
    const state = InternalGetEmailNotificationState.response.parse((({ result, msg, ...rest }) => rest)(answer.body as Record<string, unknown>));
    expect(state.users).toEqual([
      { user_id: org.member.user_id, last_active_time: null, has_accounts_in_other_realms: true },
      { user_id: org.member2.user_id, last_active_time: null, has_accounts_in_other_realms: false },
    ]);

    await dm(org.admin, org.member, "hello one");
    await dm(org.admin, org.member2, "hello two");
    await dm(org.admin, org.moderator, "hello three");
    await mailDueBatches();
    const named = await mailTo(org.member, (m) => m.text.includes("hello one"));
    expect(named.subject).toBe(`[Org ${org.slug}] DMs with ${org.admin.full_name}`);
    const plain = await mailTo(org.member2, (m) => m.text.includes("hello two"));
    expect(plain.subject).toBe(`DMs with ${org.admin.full_name}`);
    const never = await mailTo(org.moderator, (m) => m.text.includes("hello three"));
    expect(never.subject).toBe(`DMs with ${org.admin.full_name}`);
  });
});

describe("missed-message emails: a batch that keeps failing", () => {
  /** This messaging process with accounts unreachable (nothing listens on port 1). */
  function withoutAccounts() {
    const { log, lines } = createMemoryLogger("test", "warn");
    const accounts = new AccountsClient(new InternalClient("http://127.0.0.1:1", t.deps.config.INTERNAL_TOKEN), t.clock, 0);
    return { deps: { ...t.deps, log, accounts }, lines };
  }

  it("is retried each minute and mailed once it can be", async () => {
    const org = await t.createOrg();
    const broken = withoutAccounts();
    await dm(org.admin, org.member, "retried until it works");
    await mailDueBatches(broken.deps);
    for (let i = 2; i < MISSED_MESSAGE_MAX_ATTEMPTS; i++) await mailDueBatches(broken.deps, RETRY_MS);
    expect(broken.lines.filter((l) => l.level === 50)).toEqual([]);
    expect(broken.lines.at(-1)).toMatchObject({ userId: org.member.user_id, attempts: MISSED_MESSAGE_MAX_ATTEMPTS - 1 });

    await mailDueBatches(t.deps, RETRY_MS);
    const mail = await mailTo(org.member, (m) => m.text.includes("retried until it works"));
    expect(mail.subject).toBe(`DMs with ${org.admin.full_name}`);
  });

  it(`is given up after ${MISSED_MESSAGE_MAX_ATTEMPTS} tries, with an error naming the user and the count`, async () => {
    const org = await t.createOrg();
    const broken = withoutAccounts();
    await dm(org.admin, org.member, "never mailed");
    await mailDueBatches(broken.deps);
    for (let i = 2; i <= MISSED_MESSAGE_MAX_ATTEMPTS; i++) await mailDueBatches(broken.deps, RETRY_MS);
    const errors = broken.lines.filter((l) => l.level === 50);
    expect(errors).toEqual([
      expect.objectContaining({ msg: "missed-message email: batch given up", userId: org.member.user_id, attempts: MISSED_MESSAGE_MAX_ATTEMPTS, messages: 1 }),
    ]);

    // Accounts answers again: nothing is left to mail, now or later.
    await mailDueBatches(t.deps, RETRY_MS);
    await mailDueBatches(t.deps, 3600_000);
    await dm(org.admin, org.member, "a later message");
    await mailDueBatches();
    const later = await mailTo(org.member, (m) => m.text.includes("a later message"));
    expect(later.text).not.toContain("never mailed");
    expect(catcher.mails.filter((m) => m.text.includes("never mailed"))).toEqual([]);
  });
});
