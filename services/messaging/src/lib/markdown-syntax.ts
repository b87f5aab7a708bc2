import MarkdownIt from "markdown-it";
import type StateBlock from "markdown-it/lib/rules_block/state_block.mjs";
import type StateCore from "markdown-it/lib/rules_core/state_core.mjs";
import type StateInline from "markdown-it/lib/rules_inline/state_inline.mjs";

/*
 * Where Zulip's Markdown syntax differs from CommonMark's, as markdown-it rules that need nothing
 * but the text. Mentions, emoji, linkifiers and previews, which need the organization's data, are
 * in markdown.ts.
 */

const escape: (s: string) => string = MarkdownIt().utils.escapeHtml;

/**
 * `<time:...>`: Zulip's timestamp, shown in each reader's time zone. An ISO 8601 time (UTC when
 * it names no zone) or a UNIX timestamp becomes `<time datetime="...Z">`, anything else an error
 * span, as Zulip renders them.
 */
export function timeRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3c /* < */) return false;
  const m = /^<time:([^>]*?)>/.exec(state.src.slice(state.pos));
  if (!m) return false;
  if (!silent) {
    const when = parseTimestamp(m[1]);
    state.push("html_inline", "", 0).content =
      when === null
        ? `<span class="timestamp-error">Invalid time format: ${escape(m[1])}</span>`
        : `<time datetime="${isoUtc(when)}">${escape(m[1])}</time>`;
  }
  state.pos += m[0].length;
  return true;
}

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

function parseTimestamp(text: string): Date | null {
  const iso = ISO_TIME.exec(text.trim());
  if (iso) {
    const [, y, mo, d, h = "00", mi = "00", sec = "00", frac = "", zone] = iso;
    let offset = "Z";
    if (zone && zone.toUpperCase() !== "Z") offset = zone.length === 3 ? `${zone}:00` : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
    const ms = frac ? `.${frac.padEnd(3, "0").slice(0, 3)}` : "";
    const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${sec}${ms}${offset}`);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  if (/^\s*[+-]?(\d+\.?\d*|\.\d+)\s*$/.test(text)) {
    const date = new Date(Number(text) * 1000);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  return null;
}

/** Python's isoformat() of a UTC time with `+00:00` written `Z`: seconds always, microseconds when not zero. */
function isoUtc(date: Date): string {
  const [whole, ms] = date.toISOString().replace("Z", "").split(".");
  return `${whole}${ms === "000" ? "" : `.${ms}000`}Z`;
}

/** Underscores are plain text: Zulip emphasizes only with `*` (`_x_` and `__x__` stay as typed). */
export function underscoreRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x5f /* _ */) return false;
  let end = state.pos;
  while (state.src.charCodeAt(end) === 0x5f) end++;
  if (!silent) state.pending += state.src.slice(state.pos, end);
  state.pos = end;
  return true;
}

/**
 * A line Zulip reads as a list item when it follows a line of text: its preprocessor puts a blank
 * line before it, so the list starts there (an ordered one numbered by a single digit and `.`).
 */
const ITEM_AFTER_TEXT = /^[ \t]*(?:[*+-]|\d\.)[ \t]+/;

export type BlockRule = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean;

/**
 * Zulip's lists, on markdown-it's: only `1.` numbers an item (`1)` is text), and a list ends a
 * paragraph exactly where Zulip's preprocessor splits one off: at a line that is an item as typed,
 * whatever its number (`text\n2. a` is a list starting at 2), so not at a line of a `>` quote.
 */
export function zulipListRule(list: BlockRule): BlockRule {
  return (state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean => {
    const start = state.bMarks[startLine] + state.tShift[startLine];
    if (/^\d+\)/.test(state.src.slice(start, state.eMarks[startLine]))) return false;
    if (!silent || state.parentType !== "paragraph") return list(state, startLine, endLine, silent);
    const lineStart = state.src.lastIndexOf("\n", state.bMarks[startLine] - 1) + 1;
    if (!ITEM_AFTER_TEXT.test(state.src.slice(lineStart, state.eMarks[startLine]))) return false;
    // As a paragraph's terminator markdown-it only lets an ordered list starting at 1 through.
    const parent = state.parentType;
    state.parentType = "list";
    try {
      return list(state, startLine, endLine, silent);
    } finally {
      state.parentType = parent;
    }
  };
}

/**
 * Zulip writes `***x***` as `<strong><em>x</em></strong>`; markdown-it nests them the other way
 * (with empty text tokens between the markers, where the delimiter runs were).
 */
export function strongOutsideEm(state: StateCore): void {
  for (const block of state.tokens) {
    const t = block.children;
    if (block.type !== "inline" || !t) continue;
    const next = (k: number) => {
      while (k < t.length && t[k].type === "text" && t[k].content === "") k++;
      return k;
    };
    for (let i = 0; i < t.length; i++) {
      if (t[i].type !== "em_open") continue;
      const strong = next(i + 1);
      if (t[strong]?.type !== "strong_open") continue;
      let depth = 0;
      let close = strong + 1;
      for (; close < t.length; close++) {
        if (t[close].type === "strong_open") depth++;
        else if (t[close].type === "strong_close" && depth-- === 0) break;
      }
      const em = next(close + 1);
      if (close >= t.length || t[em]?.type !== "em_close") continue;
      [t[i], t[strong]] = [t[strong], t[i]];
      [t[close], t[em]] = [t[em], t[close]];
    }
  }
}

/** A table cell's alignment as Python-Markdown writes it (`text-align: center;`), not markdown-it's `text-align:center`. */
export function tableAlignStyle(state: StateCore): void {
  for (const tok of state.tokens) {
    if (tok.type !== "th_open" && tok.type !== "td_open") continue;
    const style = tok.attrGet("style");
    const m = style && /^text-align:(\w+)$/.exec(style);
    if (m) tok.attrSet("style", `text-align: ${m[1]};`);
  }
}
