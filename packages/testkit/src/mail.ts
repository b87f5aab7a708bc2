import { setTimeout as sleep } from "node:timers/promises";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { apiClient } from "./stack";

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
 * the next n mails be refused with that SMTP reply code, after their text (`at` "data", the
 * default) or at their sender (`at` "sender", as a server refusing the account would).
 */
export interface MailCatcher {
  port: number;
  /** Variables that make a service send through this catcher. */
  env: Record<string, string>;
  mails: CaughtMail[];
  /** Waits for a mail to `to` (and matching `match`, when given) and returns it. */
  waitFor(to: string, match?: (m: CaughtMail) => boolean, timeoutMs?: number): Promise<CaughtMail>;
  failNext(count: number, code: number, at?: "data" | "sender"): void;
  close(): Promise<void>;
}

export async function startMailCatcher(): Promise<MailCatcher> {
  const mails: CaughtMail[] = [];
  let failures = 0;
  let failCode = 451;
  let failAt: "data" | "sender" = "data";
  const refusal = () => Object.assign(new Error("Refused by the test"), { responseCode: failCode });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onMailFrom(_address, _session, callback) {
      if (failures > 0 && failAt === "sender") {
        failures--;
        return callback(refusal());
      }
      callback();
    },
    onData(stream, _session, callback) {
      if (failures > 0 && failAt === "data") {
        failures--;
        stream.resume();
        stream.on("end", () => callback(refusal()));
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
    failNext(count, code, at = "data") {
      failures = count;
      failCode = code;
      failAt = at;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A page of the server as a browser gets it. */
export interface Page {
  status: number;
  type: string;
  headers: Record<string, string>;
  text: string;
}

/**
 * A browser's GET of one of the server's web pages (the ones mails link to), or its POST of the
 * page's form, through the gateway at `baseUrl`, on another host name if given, with more
 * headers if given (a proxy's X-Forwarded-For).
 */
export async function browse(baseUrl: string, path: string, opts: { form?: Record<string, string>; host?: string; headers?: Record<string, string> } = {}): Promise<Page> {
  const headers = { ...opts.headers, ...(opts.host ? { host: opts.host } : {}) };
  const res = await apiClient(baseUrl).request(opts.form ? "POST" : "GET", baseUrl + path, opts.form ?? {}, { headers });
  return { status: res.status, type: res.headers["content-type"] ?? "", headers: res.headers, text: String(res.body) };
}

/** The link of a mail's text that leads to `path`: its host, and its path for `browse`. */
export function mailLink(text: string, path: string): { host: string; path: string } {
  const m = new RegExp(`https?://([^/\\s]+)(${path}\\S+)`).exec(text);
  if (!m) throw new Error(`no ${path} link in:\n${text}`);
  return { host: m[1], path: m[2] };
}
