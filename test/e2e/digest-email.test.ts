import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, runDemo, startMailCatcher, startStack, type DemoOutput, type MailCatcher, type Stack } from "@chat/testkit";

/**
 * Weekly digest emails through the whole stack with a real SMTP server catching the mails: an
 * administrator turns digests on for today's weekday (UTC) and messaging, looking every second,
 * mails the organization's away users (a fresh demo's users never reported presence).
 */

let stack: Stack;
let demo: DemoOutput;
let catcher: MailCatcher;

beforeAll(async () => {
  catcher = await startMailCatcher();
  stack = await startStack({ env: { ...catcher.env, NOREPLY_EMAIL_ADDRESS: "noreply@chat.test", DIGEST_EMAIL_POLL_SECONDS: "1" } });
  demo = await runDemo(stack);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await catcher?.close();
});

describe("digest emails", () => {
  it("on the digest day an away user gets one digest from the organization with the hot conversation and its link", async () => {
    const org = demo.orgs[0];
    const { owner, admin, member } = org.users;
    const as = (u: { email: string; api_key: string }) => apiClient(demo.base_url, u.email, u.api_key);
    const topic = `digest ${Date.now()}`;
    for (const content of ["Shall we ship on Friday?", "Friday works for me."]) {
      const res = await as(admin).post("/messages", { type: "stream", to: org.channels.public.name, topic, content });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const weekday = (new Date().getUTCDay() + 6) % 7;
    const res = await as(owner).patch("/realm", { digest_emails_enabled: true, digest_weekday: weekday });
    expect(res.status, JSON.stringify(res.body)).toBe(200);

    const mail = await catcher.waitFor(member.email, (m) => m.subject === `${org.name} weekly digest`, 20_000);
    expect(mail.fromName).toBe(org.name);
    expect(mail.from).toBe("noreply@chat.test");
    expect(mail.text).toContain(`#${org.channels.public.name} > ${topic} (2 messages, 1 person)`);
    expect(mail.text).toContain("Shall we ship on Friday?");
    expect(mail.text).toMatch(new RegExp(`https?://\\S+/#narrow/channel/${org.channels.public.stream_id}-\\S+/topic/`));
    expect(mail.text).toMatch(/https?:\/\/\S+\/#settings\/notifications/);

    // Looked at every second: still one digest a few passes later.
    await new Promise((r) => setTimeout(r, 2500));
    expect(catcher.mails.filter((m) => m.to.toLowerCase() === member.email.toLowerCase() && m.subject === `${org.name} weekly digest`)).toHaveLength(1);
  });
});
