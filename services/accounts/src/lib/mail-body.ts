import type { Mail } from "@chat/platform";
import { escapeHtml } from "./pages";

/**
 * A mail's content, stated once and written out as both parts Zulip sends: the text part, and an
 * HTML part with the same words. Everything in a line is text, escaped in the HTML part, so a
 * name, a comment or a device string cannot add markup; only links become `<a href>`, showing
 * their URL so it can be copied from either part. No styles or images: mail clients differ.
 */

/** A URL in a mail: itself in the text part, a link to itself in the HTML part. */
export class MailLink {
  constructor(readonly href: string) {}
}

export const link = (href: string) => new MailLink(href);

/** One line of a mail: text, a link, or text with links among it (`line` makes those). */
export type MailLine = string | MailLink | ReadonlyArray<string | MailLink>;

/** A line from a template whose `${}` values are text, or links when made by `link`. */
export function line(strings: TemplateStringsArray, ...values: Array<string | number | MailLink>): MailLine {
  const parts: Array<string | MailLink> = [strings[0]];
  values.forEach((v, i) => parts.push(v instanceof MailLink ? v : String(v), strings[i + 1]));
  return parts;
}

const partsOf = (l: MailLine): ReadonlyArray<string | MailLink> => (typeof l === "string" || l instanceof MailLink ? [l] : l);

const lineText = (l: MailLine) => partsOf(l).map((p) => (p instanceof MailLink ? p.href : p)).join("");

const lineHtml = (l: MailLine) =>
  partsOf(l)
    .map((p) => (p instanceof MailLink ? `<a href="${escapeHtml(p.href)}">${escapeHtml(p.href)}</a>` : escapeHtml(p).replace(/\n/g, "<br>\n")))
    .join("");

/** The text and HTML parts of a mail's lines, an empty line between paragraphs. */
export function mailBody(lines: MailLine[]): Pick<Mail, "text" | "html"> {
  const paragraphs: MailLine[][] = [[]];
  for (const l of lines) {
    if (l === "") paragraphs.push([]);
    else paragraphs[paragraphs.length - 1].push(l);
  }
  const body = paragraphs
    .filter((p) => p.length)
    .map((p) => `<p>${p.map(lineHtml).join("<br>\n")}</p>`)
    .join("\n");
  return {
    text: lines.map(lineText).join("\n"),
    html: `<!DOCTYPE html>\n<html><body>\n${body}\n</body></html>\n`,
  };
}
