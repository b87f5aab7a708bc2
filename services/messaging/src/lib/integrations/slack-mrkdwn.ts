/**
 * Slack's mrkdwn as Zulip's Markdown: `*bold*` -> `**bold**`, `_italic_` -> `*italic*`,
 * `~strike~` -> `~~strike~~`; `<url|label>` -> `[label](url)`; user, channel and special
 * mentions (`<@U123>`, `<#C123|general>`, `<!channel>`) as readable text, never as Zulip
 * mentions; and the three entities Slack escapes (`&amp;`, `&lt;`, `&gt;`) decoded. Code, inline
 * or in ``` blocks, keeps its text.
 */
export function mrkdwnToMarkdown(text: string): string {
  // Converted pieces wait behind placeholders, so that emphasis never looks inside a link or code.
  const kept: string[] = [];
  const keep = (piece: string) => `${OPEN}${kept.push(piece) - 1}${CLOSE}`;
  let out = text
    .replace(PLACEHOLDER_CHARS, "")
    .replace(/```([\s\S]*?)```/g, (_m, code: string) => keep(codeBlock(code)))
    .replace(/`[^`\n]+`/g, (code) => keep(decodeEntities(code)))
    .replace(/<([^<>\n]+)>/g, (_m, inner: string) => keep(angleBrackets(inner)));
  out = decodeEntities(out).replace(BOLD, "**$1**").replace(ITALIC, "*$1*").replace(STRIKE, "~~$1~~");
  return out.replace(PLACEHOLDER, (_m, i: string) => kept[Number(i)]);
}

const OPEN = "\uE000";
const CLOSE = "\uE001";
const PLACEHOLDER_CHARS = /[\uE000\uE001]/g;
const PLACEHOLDER = /\uE000(\d+)\uE001/g;

// Slack's emphasis: the markers hug the text (no space inside them) and stand apart from words
// (letters and digits: `_*both*_` nests, `snake_case_name` stays).
const BOLD = /(?<![\p{L}\p{N}*])\*(?!\s)([^*\n]+?)(?<!\s)\*(?![\p{L}\p{N}*])/gu;
const ITALIC = /(?<![\p{L}\p{N}_])_(?!\s)([^_\n]+?)(?<!\s)_(?![\p{L}\p{N}_])/gu;
const STRIKE = /(?<![\p{L}\p{N}~])~(?!\s)([^~\n]+?)(?<!\s)~(?![\p{L}\p{N}~])/gu;

export function decodeEntities(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** Slack's ``` may sit inside a line; Zulip's fences stand on lines of their own. */
function codeBlock(code: string): string {
  return "\n```\n" + decodeEntities(code.replace(/^\n/, "").replace(/\n$/, "")) + "\n```\n";
}

/** What Slack writes between angle brackets: links, mentions of users, channels and groups, dates. */
function angleBrackets(inner: string): string {
  const bar = inner.indexOf("|");
  const target = decodeEntities(bar < 0 ? inner : inner.slice(0, bar));
  const label = bar < 0 ? null : decodeEntities(inner.slice(bar + 1));
  if (target.startsWith("@")) return `@${label ?? target.slice(1)}`;
  if (target.startsWith("#")) return `#${label ?? target.slice(1)}`;
  // <!here>, <!channel>, <!everyone>; <!subteam^S1|@team>, <!date^...|fallback> carry their text.
  if (target.startsWith("!")) return label ?? `@${target.slice(1).split("^")[0]}`;
  if (/^mailto:/i.test(target)) return label ? `[${escapeLabel(label)}](${linkTarget(target)})` : target.slice("mailto:".length);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return label ? `[${escapeLabel(label)}](${linkTarget(target)})` : target;
  return `<${decodeEntities(inner)}>`;
}

const escapeLabel = (label: string) => label.replace(/[[\]]/g, "\\$&");
const linkTarget = (url: string) => url.replace(/ /g, "%20").replace(/\(/g, "%28").replace(/\)/g, "%29");
