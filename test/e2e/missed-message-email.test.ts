import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, runDemo, startMailCatcher, startStack, type CaughtMail, type DemoOutput, type MailCatcher, type Stack } from "@chat/testkit";

/**
 * Missed-message email notifications (Zulip's "offline email notifications"), through the
 * gateway with a real SMTP server catching the mails. Recipients never reported presence (they
 * are away) unless a test says otherwise. Each recipient batches for BATCH seconds (Zulip allows
 * any positive period), and messaging looks for due batches every second.
 */

const BATCH = 2;
/** Long enough for a batch to be due, looked at and mailed. */
const SETTLE_MS = (BATCH + 3) * 1000;

let stack: Stack;
let demo: DemoOutput;
let catcher: MailCatcher;

type Who = "owner" | "admin" | "moderator" | "member" | "member2" | "guest";
const org = () => demo.orgs[0];
const user = (who: Who) => org().users[who];
const as = (who: Who) => apiClient(demo.base_url, user(who).email, user(who).api_key);

beforeAll(async () => {
  catcher = await startMailCatcher();
  stack = await startStack({ env: { ...catcher.env, NOREPLY_EMAIL_ADDRESS: "noreply@chat.test", MISSED_MESSAGE_EMAIL_POLL_SECONDS: "1" } });
  demo = await runDemo(stack);
  const settings: Array<[Who, Record<string, unknown>]> = [
    ["member", {}],
    ["member2", { message_content_in_email_notifications: false }],
    ["moderator", {}],
    ["owner", { enable_offline_email_notifications: false }],
    ["guest", {}],
  ];
  for (const [who, extra] of settings) {
    const res = await as(who).patch("/settings", { email_notifications_batching_period_seconds: BATCH, ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  // Messaging learns the batching periods from accounts' events.
  await sleep(1500);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await catcher?.close();
});

async function send(from: Who, params: Record<string, unknown>): Promise<number> {
  const res = await as(from).post("/messages", params);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as { id: number }).id;
}
const dm = (from: Who, to: Who, content: string) => send(from, { type: "direct", to: JSON.stringify([user(to).user_id]), content });
const toChannel = (from: Who, topic: string, content: string) => send(from, { type: "stream", to: org().channels.public.name, topic, content });

const mailsTo = (who: Who, match: (m: CaughtMail) => boolean) => catcher.mails.filter((m) => m.to.toLowerCase() === user(who).email.toLowerCase() && match(m));
const mentions = (text: string) => (m: CaughtMail) => m.text.includes(text);

let n = 0;
const unique = (what: string) => `${what} ${++n}-${Date.now()}`;

describe("missed-message emails", () => {
  it("a direct message to an away user: one mail from the organization with the content, the sender and a link to the conversation", async () => {
    const content = unique("Lunch at noon?");
    await dm("admin", "member", content);
    const mail = await catcher.waitFor(user("member").email, mentions(content), SETTLE_MS + 10_000);
    expect(mail.subject).toBe(`DMs with ${user("admin").full_name}`);
    expect(mail.fromName).toBe(org().name);
    expect(mail.from).toBe("noreply@chat.test");
    expect(mail.text).toContain(`${user("admin").full_name} (`);
    const slug = user("admin").full_name.replace(/[ "%/<>`]+/g, "-");
    expect(mail.text).toContain(`/#narrow/dm/${user("admin").user_id}-${slug}`);
    expect(mail.text).toMatch(new RegExp(`https?://\\S+/#narrow/dm/${user("admin").user_id}-`));
  });

  it("two direct messages within the period make one mail with both", async () => {
    const first = unique("first of two");
    const second = unique("second of two");
    await dm("member2", "member", first);
    await dm("member2", "member", second);
    const mail = await catcher.waitFor(user("member").email, mentions(first), SETTLE_MS + 10_000);
    expect(mail.text).toContain(second);
    expect(mail.text.indexOf(first)).toBeLessThan(mail.text.indexOf(second));
    expect(mail.subject).toBe(`DMs with ${user("member2").full_name}`);
    await sleep(1000);
    expect(mailsTo("member", (m) => m.text.includes(first) || m.text.includes(second))).toHaveLength(1);
  });

  it("a message read before the period ends is not mailed; the batch's other conversations are", async () => {
    const read = unique("read in time");
    const other = unique("left unread");
    const id = await dm("member2", "member", read);
    const flagged = await as("member").post("/messages/flags", { messages: JSON.stringify([id]), op: "add", flag: "read" });
    expect(flagged.status, JSON.stringify(flagged.body)).toBe(200);
    await dm("admin", "member", other);
    // Both were in the member's batch: once the unread one is mailed, the read one was judged.
    await catcher.waitFor(user("member").email, mentions(other), SETTLE_MS + 10_000);
    await sleep(1000);
    expect(mailsTo("member", mentions(read))).toEqual([]);
  });

  it("channel messages: none without a mention, a mail naming `#channel > topic` with one", async () => {
    const quiet = unique("no mention here");
    const quietTopic = unique("quiet");
    await toChannel("admin", quietTopic, quiet);
    const topic = unique("loud");
    const loud = unique(`@**${user("member").full_name}** please look`);
    await toChannel("admin", topic, loud);
    const mail = await catcher.waitFor(user("member").email, mentions("please look"), SETTLE_MS + 10_000);
    expect(mail.subject).toBe(`#${org().channels.public.name} > ${topic}`);
    expect(mail.text).toContain(`/#narrow/channel/${org().channels.public.stream_id}-`);
    expect(mail.text).toContain("mentioned");
    await sleep(1000);
    expect(mailsTo("member", (m) => m.text.includes(quiet) || m.subject.includes(quietTopic))).toEqual([]);
  });

  it("a channel whose email notifications the user turned on: its messages are mailed without a mention", async () => {
    const property = { stream_id: org().channels.public.stream_id, property: "email_notifications", value: true };
    const res = await as("guest").post("/users/me/subscriptions/properties", { subscription_data: JSON.stringify([property]) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const topic = unique("news");
    const content = unique("the new release is out");
    await toChannel("admin", topic, content);
    const mail = await catcher.waitFor(user("guest").email, mentions(content), SETTLE_MS + 10_000);
    expect(mail.subject).toBe(`#${org().channels.public.name} > ${topic}`);
    expect(mail.text).toContain("email notifications for this channel");
  });

  it("content hidden by the user's setting: a notice of new messages without the content", async () => {
    const secret = unique("the secret plan");
    await dm("admin", "member2", secret);
    const mail = await catcher.waitFor(user("member2").email, (m) => m.subject === `DMs with ${user("admin").full_name}`, SETTLE_MS + 10_000);
    expect(mail.text).not.toContain("secret plan");
    expect(mail.text).toContain(`1 new message from ${user("admin").full_name}`);
    expect(mail.text).toContain("/#narrow/dm/");
  });

  it("a user created after the organization turned channel emails on by default is mailed a channel's messages; earlier users keep theirs off", async () => {
    // Zulip applies the defaults when the user is created: only later users get them.
    const defaults = await as("admin").patch("/realm/user_settings_defaults", {
      enable_stream_email_notifications: true,
      email_notifications_batching_period_seconds: BATCH,
    });
    expect(defaults.status, JSON.stringify(defaults.body)).toBe(200);
    const email = `late-${Date.now()}@example.com`;
    const created = await as("owner").post("/users", { email, password: "a long password", full_name: "Lena Latecomer" });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const lateId = (created.body as { user_id: number }).user_id;
    // Messaging learns the new user's settings from accounts' event, as in beforeAll.
    await sleep(1500);
    const channel = unique("announcements").replace(/\s+/g, "-");
    const principals = JSON.stringify([lateId, user("member").user_id]);
    const sub = await as("admin").post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: channel }]), principals });
    expect(sub.status, JSON.stringify(sub.body)).toBe(200);

    // Both are away; no mention: only the default (or its absence) decides.
    const topic = unique("schedule");
    const content = unique("the office is closed on Friday");
    await send("admin", { type: "stream", to: channel, topic, content });
    const mail = await catcher.waitFor(email, mentions(content), SETTLE_MS + 10_000);
    expect(mail.subject).toBe(`#${channel} > ${topic}`);
    expect(mail.text).toContain("email notifications for this channel");
    await sleep(1000);
    expect(mailsTo("member", mentions(content))).toEqual([]);
  });

  it("no mail with the setting off, to a user active a moment ago, or for the sender's own message", async () => {
    const off = unique("setting is off");
    const active = unique("user is here");
    const own = unique("my own words");
    await dm("admin", "owner", off);
    const presence = await as("moderator").post("/users/me/presence", { status: "active" });
    expect(presence.status, JSON.stringify(presence.body)).toBe(200);
    await dm("admin", "moderator", active);
    await dm("member", "admin", own);
    await sleep(SETTLE_MS + 1000);
    expect(mailsTo("owner", mentions(off))).toEqual([]);
    expect(mailsTo("moderator", mentions(active))).toEqual([]);
    expect(catcher.mails.filter((m) => m.to.toLowerCase() === user("member").email.toLowerCase() && m.text.includes(own))).toEqual([]);
  });
});
