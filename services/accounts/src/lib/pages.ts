import type { FastifyReply, FastifyRequest } from "fastify";
import { INTERNAL_HEADERS, readSubdomain } from "@chat/platform";
import { PASSWORD_MIN_LENGTH } from "./credentials";

/**
 * The web pages mails link to (sign-up from an invitation, password reset, email change): plain
 * HTML forms without scripts, styled inline, so they work in any browser and from a phone's mail.
 */

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

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

const STYLE = `body{font-family:system-ui,sans-serif;background:#f5f5f5;color:#222;margin:0}
main{max-width:26rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin-top:0}label{display:block;margin:1rem 0 .3rem;font-weight:600}
input{box-sizing:border-box;width:100%;padding:.5rem;font-size:1rem;border:1px solid #bbb;border-radius:4px}
button{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem;border:0;border-radius:4px;background:#2d6cdf;color:#fff;cursor:pointer}
.error{color:#b00020}.muted{color:#666;font-size:.9rem}`;

/** A whole page: a title and its content. */
export function page(title: string, body: Html): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body.value}
</main></body></html>
`;
}

/** Answers a page: HTML, never cached (the path carries a secret), not framed by other sites. */
export function sendPage(req: FastifyRequest, reply: FastifyReply, status: number, title: string, body: Html): void {
  const text = page(title, body);
  reply.hijack();
  reply.raw.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
    [INTERNAL_HEADERS.requestId]: req.id,
  });
  reply.raw.end(text);
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
