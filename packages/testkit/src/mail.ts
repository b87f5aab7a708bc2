import { setTimeout as sleep } from "node:timers/promises";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** A mail as the catcher received it over SMTP. */
export interface CaughtMail {
  from: string;
  fromName: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
}

/**
 * A real SMTP server on 127.0.0.1 that keeps what it receives, for tests of the mails the
 * services send: point a stack's EMAIL_HOST/EMAIL_PORT at it (`env`). `failNext(n, code)` makes
 * the next n mails be refused with that SMTP reply code.
 */
export interface MailCatcher {
  port: number;
  /** Variables that make a service send through this catcher. */
  env: Record<string, string>;
  mails: CaughtMail[];
  /** Waits for a mail to `to` (and matching `match`, when given) and returns it. */
  waitFor(to: string, match?: (m: CaughtMail) => boolean, timeoutMs?: number): Promise<CaughtMail>;
  failNext(count: number, code: number): void;
  close(): Promise<void>;
}

export async function startMailCatcher(): Promise<MailCatcher> {
  const mails: CaughtMail[] = [];
  let failures = 0;
  let failCode = 451;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, callback) {
      if (failures > 0) {
        failures--;
        stream.resume();
        stream.on("end", () => callback(Object.assign(new Error("Refused by the test"), { responseCode: failCode })));
        return;
      }
      simpleParser(stream)
        .then((parsed) => {
          const from = parsed.from?.value[0];
          const to = Array.isArray(parsed.to) ? parsed.to[0] : parsed.to;
          mails.push({
            from: from?.address ?? "",
            fromName: from?.name ?? "",
            to: to?.value[0]?.address ?? "",
            subject: parsed.subject ?? "",
            text: parsed.text ?? "",
            html: typeof parsed.html === "string" ? parsed.html : null,
          });
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    port,
    env: { EMAIL_HOST: "127.0.0.1", EMAIL_PORT: String(port), EMAIL_USE_TLS: "false", EMAIL_POLL_SECONDS: "1" },
    mails,
    async waitFor(to, match = () => true, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = mails.find((m) => m.to.toLowerCase() === to.toLowerCase() && match(m));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no mail to ${to} within ${timeoutMs} ms (got: ${mails.map((m) => `${m.to}: ${m.subject}`).join("; ") || "none"})`);
        await sleep(50);
      }
    },
    failNext(count, code) {
      failures = count;
      failCode = code;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
