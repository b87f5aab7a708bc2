import nodemailer from "nodemailer";
import type pg from "pg";
import { z } from "zod";
import type { Clock } from "./clock";
import { envBool } from "./config";
import { afterCommit, type Queryable } from "./db";
import type { Logger } from "./logger";

/**
 * Outgoing mail (invitations, confirmations, password resets, notifications). A mail is a row of
 * the writer's schema's `mail_outbox` table, written in the transaction that makes it due (an
 * invitation's link is sent only if the invitation was committed), and sent by that service's
 * MailSender over SMTP, with retries, then deleted: links in mails are secrets, so a sent mail
 * is not kept. Without `EMAIL_HOST` mails are written to the log instead, as Django's console
 * backend does, so a development server's links can be followed.
 */

export const mailConfigShape = {
  /** The SMTP server mail is sent through. Unset: mails go to the log (development). */
  EMAIL_HOST: z.string().optional(),
  /** The SMTP server's port: 587 for STARTTLS (EMAIL_USE_TLS), 465 for TLS from the start (EMAIL_USE_SSL), 25 for neither. */
  EMAIL_PORT: z.coerce.number().int().min(1).max(65535).default(587),
  /** The SMTP account's user name (unset: no authentication). */
  EMAIL_HOST_USER: z.string().optional(),
  /** The SMTP account's password (a secret: keep it with the other secrets, e.g. chat-secrets in Kubernetes). */
  EMAIL_HOST_PASSWORD: z.string().optional(),
  /** STARTTLS before authenticating (port 587). Refuses a server that does not offer it. */
  EMAIL_USE_TLS: envBool(true),
  /** TLS from the first byte (port 465); wins over EMAIL_USE_TLS. */
  EMAIL_USE_SSL: envBool(false),
  /** The sender of every mail (default `noreply@` the external host). */
  NOREPLY_EMAIL_ADDRESS: z.string().optional(),
  /** How often each process looks for mails due (a mail written in this process wakes it at once). */
  EMAIL_POLL_SECONDS: z.coerce.number().int().min(1).default(10),
  /** The wait before the first retry of a mail the server did not take; each next waits twice as long. */
  EMAIL_RETRY_SECONDS: z.coerce.number().int().min(1).default(30),
};
export type MailConfig = z.infer<z.ZodObject<typeof mailConfigShape>> & { EXTERNAL_URL: string };

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Shown before the sender's address, e.g. `Ada Boss (via Acme)`. */
  fromName?: string;
  replyTo?: string;
}

/** Attempts before a mail is given up (about an hour of retries with the default 30 s). */
export const MAIL_MAX_ATTEMPTS = 8;
/** How long a claimed mail stays with the process sending it before another may try. */
const LEASE_SECONDS = 120;

const wakers = new Set<() => void>();

/** Queues a mail in `db`'s transaction; this process's sender is woken once it commits. */
export async function queueMail(db: Queryable, mail: Mail): Promise<void> {
  await db.query(
    `INSERT INTO mail_outbox (to_address, subject, text_body, html_body, from_name, reply_to)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [mail.to, mail.subject, mail.text, mail.html ?? null, mail.fromName ?? null, mail.replyTo ?? null],
  );
  afterCommit(db, () => {
    for (const wake of wakers) wake();
  });
}

/** The SMTP connection the settings describe; null without EMAIL_HOST. */
function smtpTransport(c: MailConfig): nodemailer.Transporter | null {
  if (!c.EMAIL_HOST) return null;
  return nodemailer.createTransport({
    host: c.EMAIL_HOST,
    port: c.EMAIL_PORT,
    secure: c.EMAIL_USE_SSL,
    requireTLS: !c.EMAIL_USE_SSL && c.EMAIL_USE_TLS,
    ignoreTLS: !c.EMAIL_USE_SSL && !c.EMAIL_USE_TLS,
    ...(c.EMAIL_HOST_USER ? { auth: { user: c.EMAIL_HOST_USER, pass: c.EMAIL_HOST_PASSWORD ?? "" } } : {}),
    // nodemailer waits 10 minutes for a silent server by default: a mail that waits is retried instead.
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
  });
}

/**
 * Sends one mail at once, not through the outbox (the operator's `chat mail test`, as Zulip's
 * send_test_email): the SMTP server's refusal or the connection's failure is thrown as it came.
 */
export async function sendMailNow(config: MailConfig, mail: Mail): Promise<void> {
  const transport = smtpTransport(config);
  if (!transport) throw new Error("EMAIL_HOST is not set: mails are written to the services' logs, not sent");
  const address = senderAddress(config);
  try {
    await transport.sendMail({ from: mail.fromName ? { name: mail.fromName, address } : address, to: mail.to, subject: mail.subject, text: mail.text });
  } finally {
    transport.close();
  }
}

export function senderAddress(config: MailConfig): string {
  return config.NOREPLY_EMAIL_ADDRESS || `noreply@${new URL(config.EXTERNAL_URL).hostname}`;
}

interface MailRow {
  id: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  from_name: string | null;
  reply_to: string | null;
  attempts: number;
}

/**
 * A reply in the 500s to the recipient or the message is the server's final word about this mail.
 * Others may pass later: refusals of the connection, the login or the sender (530/535: wrong or
 * rotating credentials), 4xx replies, and network failures.
 */
function isPermanent(err: unknown): boolean {
  const { responseCode, command } = err as { responseCode?: number; command?: string };
  return typeof responseCode === "number" && responseCode >= 500 && responseCode < 600 && (command === "RCPT TO" || command === "DATA");
}

/** How long stop() lets a mail being sent finish before the connection is closed under it (it is sent again later). */
const STOP_WAIT_MS = 5000;

export interface MailSenderOptions {
  pool: pg.Pool;
  config: MailConfig;
  log: Logger;
  clock: Clock;
}

/**
 * Sends the schema's queued mails, one at a time per process (mail is rare; SMTP servers limit
 * connections), claiming each with a lease so replicas do not send one twice while both run.
 */
export class MailSender {
  private readonly transport: nodemailer.Transporter | null;
  private stopped = false;
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly wake = () => this.kick();

  constructor(private readonly opts: MailSenderOptions) {
    this.transport = smtpTransport(opts.config);
  }

  start(): void {
    if (!this.transport) this.opts.log.warn("EMAIL_HOST is not set: mails are written to the log instead of sent");
    wakers.add(this.wake);
    this.timer = setInterval(this.wake, this.opts.config.EMAIL_POLL_SECONDS * 1000);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    wakers.delete(this.wake);
    if (this.timer) clearInterval(this.timer);
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((resolve) => (waited = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(waited);
    // A send still going fails with the closed connection; its row's lease brings it back later.
    this.transport?.close();
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((err) => this.opts.log.warn({ err: (err as Error).message }, "mail: pass failed; will retry"))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const mail = await this.claim();
      if (!mail) return;
      await this.send(mail);
    }
  }

  private async claim(): Promise<MailRow | null> {
    const now = this.opts.clock.now();
    const { rows } = await this.opts.pool.query<MailRow>(
      `UPDATE mail_outbox SET next_attempt_at = $1::timestamptz + make_interval(secs => $2), attempts = attempts + 1
       WHERE id = (SELECT id FROM mail_outbox WHERE next_attempt_at <= $1 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING id, to_address, subject, text_body, html_body, from_name, reply_to, attempts`,
      [now, LEASE_SECONDS],
    );
    return rows[0] ?? null;
  }

  private async send(mail: MailRow): Promise<void> {
    const { config, log, pool, clock } = this.opts;
    const address = senderAddress(config);
    try {
      if (this.transport) {
        await this.transport.sendMail({
          from: mail.from_name ? { name: mail.from_name, address } : address,
          to: mail.to_address,
          subject: mail.subject,
          text: mail.text_body,
          ...(mail.html_body ? { html: mail.html_body } : {}),
          ...(mail.reply_to ? { replyTo: mail.reply_to } : {}),
        });
      } else {
        log.info({ to: mail.to_address, subject: mail.subject, text: mail.text_body }, "mail (not sent: no EMAIL_HOST)");
      }
      await pool.query("DELETE FROM mail_outbox WHERE id = $1", [mail.id]);
    } catch (err) {
      const reason = (err as Error).message;
      if (isPermanent(err) || mail.attempts >= MAIL_MAX_ATTEMPTS) {
        await pool.query("DELETE FROM mail_outbox WHERE id = $1", [mail.id]);
        log.error({ to: mail.to_address, subject: mail.subject, attempts: mail.attempts, err: reason }, "mail: given up");
        return;
      }
      const waitSeconds = config.EMAIL_RETRY_SECONDS * 2 ** (mail.attempts - 1);
      await pool.query("UPDATE mail_outbox SET next_attempt_at = $2::timestamptz + make_interval(secs => $3), last_error = $4 WHERE id = $1", [
        mail.id,
        clock.now(),
        waitSeconds,
        reason,
      ]);
      log.warn({ to: mail.to_address, attempts: mail.attempts, retryInSeconds: waitSeconds, err: reason }, "mail: not sent; will retry");
    }
  }
}
