import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, startMailCatcher, type MailCatcher, type TestEnv } from "@chat/testkit";
import { ManualClock } from "./clock";
import { createPool, withTx } from "./db";
import { createMemoryLogger } from "./logger";
import { MAIL_MAX_ATTEMPTS, mailConfigShape, MailSender, queueMail, type MailConfig } from "./mail";
import { z } from "zod";
import { sleep, until } from "@chat/testkit/e2e";

/** The mail sender against a real SMTP server (the testkit's catcher) and accounts' mail_outbox table. */

let env: TestEnv;
let pool: pg.Pool;
let catcher: MailCatcher;
const running: MailSender[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  await env.migrate("accounts");
  pool = createPool(env.databaseUrl, "accounts", 4);
  catcher = await startMailCatcher();
});

afterAll(async () => {
  await pool?.end();
  await catcher?.close();
  await env?.cleanup();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await pool.query("DELETE FROM mail_outbox");
  catcher.mails.length = 0;
});

function sender(vars: Record<string, string>, clock = new ManualClock()) {
  const config: MailConfig = { ...z.object(mailConfigShape).parse(vars), EXTERNAL_URL: "http://chat.example" };
  const { log, lines } = createMemoryLogger("mail-test", "debug");
  const s = new MailSender({ pool, config, log, clock });
  running.push(s);
  s.start();
  return { s, lines, clock };
}

const outboxRows = async () => (await pool.query("SELECT to_address, attempts, last_error FROM mail_outbox")).rows;

describe("MailSender", () => {
  it("sends a mail once its transaction commits, from the no-reply address, and keeps no copy", async () => {
    sender(catcher.env);
    await withTx(pool, async (tx) => {
      await queueMail(tx, { to: "ada@example.com", subject: "Hello", text: "Body text", fromName: "Ada (via Acme)", replyTo: "boss@example.com" });
      await sleep(300);
      expect(catcher.mails).toHaveLength(0);
    });
    const mail = await catcher.waitFor("ada@example.com");
    expect(mail).toMatchObject({ from: "noreply@chat.example", fromName: "Ada (via Acme)", subject: "Hello" });
    expect(mail.text.trim()).toBe("Body text");
    await until("the outbox to empty", async () => (await outboxRows()).length === 0);
  });

  it("sends nothing from a transaction that rolls back", async () => {
    sender(catcher.env);
    await expect(
      withTx(pool, async (tx) => {
        await queueMail(tx, { to: "never@example.com", subject: "No", text: "No" });
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    await queueMail(pool, { to: "after@example.com", subject: "Yes", text: "Yes" });
    await catcher.waitFor("after@example.com");
    expect(catcher.mails.map((m) => m.to)).toEqual(["after@example.com"]);
  });

  it("retries a mail the server turned away for now, after the retry wait", async () => {
    const { clock } = sender({ ...catcher.env, EMAIL_RETRY_SECONDS: "30" });
    catcher.failNext(1, 451);
    await queueMail(pool, { to: "later@example.com", subject: "Retry", text: "Retry" });
    await until("a failed attempt", async () => (await outboxRows())[0]?.last_error);
    expect(await outboxRows()).toEqual([expect.objectContaining({ attempts: 1, last_error: expect.stringContaining("451") })]);
    expect(catcher.mails).toHaveLength(0);
    clock.advance(31_000);
    await catcher.waitFor("later@example.com");
    await until("the outbox to empty", async () => (await outboxRows()).length === 0);
  });

  it("retries a mail whose sender the server refused with a 5xx (a login or account problem, not the mail's)", async () => {
    const { clock } = sender({ ...catcher.env, EMAIL_RETRY_SECONDS: "30" });
    catcher.failNext(1, 535, "sender");
    await queueMail(pool, { to: "creds@example.com", subject: "Retry", text: "Retry" });
    await until("a failed attempt", async () => (await outboxRows())[0]?.last_error);
    expect(await outboxRows()).toEqual([expect.objectContaining({ attempts: 1, last_error: expect.stringContaining("535") })]);
    clock.advance(31_000);
    await catcher.waitFor("creds@example.com");
  });

  it("gives a mail up at once when the server refuses it for good, and after the last attempt otherwise", async () => {
    const { lines, clock } = sender({ ...catcher.env, EMAIL_RETRY_SECONDS: "1" });
    catcher.failNext(1, 550);
    await queueMail(pool, { to: "nobody@example.com", subject: "Bounce", text: "Bounce" });
    await until("the bounce given up", async () => lines.some((l) => l.msg === "mail: given up" && l.to === "nobody@example.com"));
    expect(await outboxRows()).toEqual([]);

    catcher.failNext(MAIL_MAX_ATTEMPTS, 421);
    await queueMail(pool, { to: "flaky@example.com", subject: "Flaky", text: "Flaky" });
    await until(
      "the last attempt given up",
      async () => {
        clock.advance(3_600_000);
        return lines.some((l) => l.msg === "mail: given up" && l.to === "flaky@example.com");
      },
      { timeoutMs: 30_000 },
    );
    expect(await outboxRows()).toEqual([]);
    expect(catcher.mails).toHaveLength(0);
  });

  it("without EMAIL_HOST writes mails to the log instead, so a development server's links can be followed", async () => {
    const { lines } = sender({});
    await queueMail(pool, { to: "dev@example.com", subject: "Your link", text: "http://chat.example/accounts/do_confirm/abc" });
    const line = await until("the logged mail", async () => lines.find((l) => l.to === "dev@example.com"));
    expect(line).toMatchObject({ subject: "Your link", text: expect.stringContaining("/accounts/do_confirm/abc") });
    expect(lines.some((l) => String(l.msg).includes("EMAIL_HOST is not set"))).toBe(true);
    await until("the outbox to empty", async () => (await outboxRows()).length === 0);
  });
});
