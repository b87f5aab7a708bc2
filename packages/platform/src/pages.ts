import type { RouteDef } from "@chat/contracts";
import type { ApiError } from "./errors";

/**
 * The web pages mails link to (contract routes with `page`): plain HTML without scripts, styled
 * inline, so they work in any browser and from a phone's mail. Their errors are pages too, since
 * a person reads them, not a client.
 */

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const STYLE = `body{font-family:system-ui,sans-serif;background:#f5f5f5;color:#222;margin:0}
main{max-width:26rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin-top:0}label{display:block;margin:1rem 0 .3rem;font-weight:600}
input{box-sizing:border-box;width:100%;padding:.5rem;font-size:1rem;border:1px solid #bbb;border-radius:4px}
button{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem;border:0;border-radius:4px;background:#2d6cdf;color:#fff;cursor:pointer}
.error{color:#b00020}.muted{color:#666;font-size:.9rem}`;

/** Headers of every page: HTML, never cached (the path carries a secret), not framed by other sites. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
};

/** A whole page: its title, and its content (`bodyHtml` is HTML already escaped where needed). */
export function htmlPage(title: string, bodyHtml: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>
${bodyHtml}
</main></body></html>
`;
}

const ERROR_TITLES: Record<number, string> = {
  400: "Something is wrong with this request",
  404: "Page not found",
  405: "Method not allowed",
  413: "Too much data",
  414: "Address too long",
  429: "Too many requests",
  431: "Request too large",
  503: "Temporarily unavailable",
};

/** "in 3 minutes": how long a rate-limited visitor waits, rounded up to a unit a person reads. */
function waitText(seconds: number): string {
  const [n, unit] = seconds < 60 ? [Math.ceil(seconds), "second"] : seconds < 3600 ? [Math.ceil(seconds / 60), "minute"] : [Math.ceil(seconds / 3600), "hour"];
  return `in ${n} ${unit}${n === 1 ? "" : "s"}`;
}

/** The page an error shows a person: a title for its status, its message, and when to try again. */
export function errorPage(err: ApiError): string {
  const title = ERROR_TITLES[err.status] ?? (err.status >= 500 ? "Something went wrong" : "Request refused");
  const retry = Number(err.extra["retry-after"]);
  const hint =
    err.status === 429 && retry > 0
      ? `<p class="muted">Try again ${waitText(retry)}.</p>`
      : err.status === 404
        ? `<p class="muted">Check the address, or ask for a new link.</p>`
        : err.status >= 500
          ? `<p class="muted">Try again in a moment.</p>`
          : "";
  return htmlPage(title, `<p class="error" role="alert">${escapeHtml(err.message)}</p>\n${hint}`);
}

/**
 * Whether a request URL is a page's: below the first path segment of one of `routes`' pages
 * (`/accounts/...`, `/join/...`), at the root or below `/api/v1`. Every route there is a page, so
 * an error there (no such path, a wrong method, a segment too long) is shown as one.
 */
export function pageUrlTest(routes: readonly RouteDef[]): (url: string) => boolean {
  const roots = new Set(routes.filter((r) => r.page).map((r) => r.path.split("/")[1]));
  return (url) => {
    const path = url.split("?", 1)[0];
    const below = path.startsWith("/api/v1/") ? path.slice("/api/v1".length) : path;
    return roots.has(below.split("/")[1]);
  };
}
