import type { FastifyReply, FastifyRequest } from "fastify";
import { escapeHtml, htmlPage, INTERNAL_HEADERS, PAGE_HEADERS, readClientIp, readSubdomain } from "@chat/platform";
import { PASSWORD_MIN_LENGTH } from "./credentials";

/**
 * The web pages mails link to (sign-up from an invitation, password reset, email change): their
 * forms and answers, in the platform's page shell (its errors are pages in the same shell).
 */

export { escapeHtml };

/** A tagged template whose `${}` values are escaped, unless they are `Html` made by it. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  values.forEach((v, i) => {
    const part = Array.isArray(v) ? v.map((x) => (x instanceof Html ? x.value : escapeHtml(String(x)))).join("") : v instanceof Html ? v.value : escapeHtml(String(v ?? ""));
    out += part + strings[i + 1];
  });
  return new Html(out);
}

/** Answers a page: a title and its content (see PAGE_HEADERS: never cached, since the path carries a secret). */
export function sendPage(req: FastifyRequest, reply: FastifyReply, status: number, title: string, body: Html): void {
  const text = htmlPage(title, body.value);
  reply.hijack();
  reply.raw.writeHead(status, {
    ...PAGE_HEADERS,
    "content-length": String(Buffer.byteLength(text)),
    [INTERNAL_HEADERS.requestId]: req.id,
  });
  reply.raw.end(text);
}

/** The visitor's address as the gateway saw it; the peer's when the request did not come through it. */
export function visitorIp(req: FastifyRequest): string {
  return readClientIp(req.headers) ?? req.ip;
}

/**
 * Whether a link of `realm` may be followed on the host the request came to: any on the
 * deployment's own host, only its own on an organization's host (ORGANIZATION_SUBDOMAINS), as
 * Zulip refuses another organization's confirmation links.
 */
export function servesRealm(req: FastifyRequest, realm: { stringId: string }): boolean {
  const subdomain = readSubdomain(req.headers);
  return subdomain === null || subdomain === realm.stringId;
}

/** A form's refusal, shown above it (nothing without one). */
export const errorLine = (error: string | Html | undefined): Html | "" => (error ? html`<p class="error" role="alert">${error}</p>` : "");

/** The sign-up form (name and password) below `intro`, with what was typed and what was wrong. */
export function accountForm(intro: Html, values: { fullName?: string; error?: string }): Html {
  return html`${intro}
${errorLine(values.error)}
<form method="post">
<label for="full_name">Your name</label>
<input id="full_name" name="full_name" autocomplete="name" required maxlength="60" value="${values.fullName ?? ""}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}">
<p class="muted">At least ${PASSWORD_MIN_LENGTH} characters.</p>
<button type="submit">Create account</button>
</form>`;
}
