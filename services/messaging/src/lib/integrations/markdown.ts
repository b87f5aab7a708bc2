/**
 * Markdown pieces for integrations that build messages out of a third party's text (titles,
 * names, comments), where that text must read as it was written and never become a mention,
 * a link, math or a fence of the message's own.
 */

/** Line breaks as the renderer sees them: a lone carriage return starts a line too. */
const LINE_BREAK = /\s*[\r\n]\s*/g;

/** Inline text as plain text: Markdown's emphasis, link, code, math and HTML characters escaped. */
export function escapeInline(text: string): string {
  return text.replace(/[\\`*_[\]~<>$]/g, "\\$&").replace(LINE_BREAK, " ");
}

/** `[label](url)` with the label escaped, and the URL's characters that would end it encoded. */
export function link(label: string, url: string): string {
  return `[${escapeInline(label)}](${linkTarget(url)})`;
}

/**
 * A URL as a link's target: whitespace, control characters and parentheses percent-encoded, so
 * that a payload's URL cannot end the link and go on as Markdown of its own (a mention).
 */
export function linkTarget(url: string): string {
  return url.replace(/[\s\p{C}()<>]/gu, (c) => Array.from(new TextEncoder().encode(c), (b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join(""));
}

/** Inline code, whatever backticks the text holds. */
export function inlineCode(text: string): string {
  const flat = text.replace(LINE_BREAK, " ");
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") ? " " : "";
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/**
 * Someone's Markdown as written, except that its `@**name**` and `@*group*` cannot mention anyone
 * here: their `@` escaped, unless an odd run of backslashes already escapes it (an even one only
 * escapes itself, `\\@**all**` would still mention everyone).
 */
export const withoutMentions = (text: string) =>
  text.replace(/(\\*)@(?=_?\*)/g, (match, slashes: string) => (slashes.length % 2 === 0 ? `${slashes}\\@` : match));

/**
 * A block of someone's Markdown (a comment, a description) quoted as written, at most `max`
 * characters: its fences cannot close the quote, and its `@**name**` cannot mention anyone here.
 */
export function quoteBlock(text: string, max = 1500): string {
  const cut = text.length > max ? `${text.slice(0, max).trimEnd()} […]` : text;
  const body = withoutMentions(cut.replace(/\r\n?/g, "\n").trim());
  const longest = Math.max(2, ...(body.match(/^ {0,3}~+/gm) ?? []).map((run) => run.trim().length));
  const fence = "~".repeat(longest + 1);
  return `${fence} quote\n${body}\n${fence}`;
}

/** A commit message's or a text's first line. */
export const firstLine = (text: string) => text.split("\n", 1)[0].trim();

/** "1 commit", "3 commits". */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
