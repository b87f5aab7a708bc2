import katex, { type KatexOptions } from "katex";
import type MarkdownIt from "markdown-it";
import { escapeHtml } from "markdown-it/lib/common/utils.mjs";
import type StateInline from "markdown-it/lib/rules_inline/state_inline.mjs";

/**
 * TeX math as Zulip renders it, with KaTeX: inline `$$...$$` and ```` ```math ```` blocks. Zulip
 * runs KaTeX's command-line tool, whose options are KaTeX's defaults (throwOnError on, trust off,
 * maxExpand 1000); the library with the same options gives the same markup.
 */

/**
 * Macro lookups KaTeX may make (about one per token it reads, expansions included) per formula
 * and per message. maxExpand alone does not bound the work: 1000 expansions of a macro whose body
 * is a few thousand tokens is millions of tokens, and KaTeX's cost grows faster than linearly with
 * a formula's length (30,000 plain letters take about a second). A 10,000-character message of
 * real mathematics needs far fewer; past either limit a formula shows as a TeX error, where
 * Zulip's renderer would instead time out and refuse the message.
 */
const FORMULA_LOOKUPS = 20_000;
const MESSAGE_LOOKUPS = 40_000;

/**
 * Tokens that cost far more than one lookup's worth: each `&` is a new array column, and each `|`
 * or `:` in a column specification a rule down the whole array; KaTeX writes several hundred bytes
 * of markup for each, so 10,000 of them (`\begin{array}{c}&&&...`) took 1.5 s and made 5.7 MB of
 * HTML. Counted as this many lookups, a message holds at most 2,000 of them (a 10x10 matrix uses 90).
 */
const COSTLY_TOKENS: ReadonlyMap<string | symbol, number> = new Map([
  ["&", 20],
  ["|", 20],
  [":", 20],
]);

interface MathEnv {
  mathLookupsLeft?: number;
}

class TexBudgetExceeded extends Error {}

/** KaTeX's HTML for `tex`, or null where KaTeX refuses it (or it costs too much). */
function renderTex(tex: string, displayMode: boolean, env: MathEnv): string | null {
  const messageLeft = env.mathLookupsLeft ?? MESSAGE_LOOKUPS;
  const limit = Math.min(FORMULA_LOOKUPS, messageLeft);
  let lookups = 0;
  // KaTeX keeps macros in this object (and \gdef writes to it), checking it for every control
  // word it reads: counting those checks counts the tokens it works through. A new one per
  // formula, so that no definition outlives its formula.
  const macros = new Proxy<NonNullable<KatexOptions["macros"]>>(
    {},
    {
      getOwnPropertyDescriptor(target, key) {
        lookups += COSTLY_TOKENS.get(key) ?? 1;
        if (lookups > limit) throw new TexBudgetExceeded();
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
    },
  );
  try {
    return katex.renderToString(tex, {
      displayMode,
      throwOnError: true,
      trust: false,
      maxExpand: 1000,
      // Caps sizes such as \rule{1000em}{1000em}; Zulip leaves them unbounded.
      maxSize: 100,
      // Output is the same as under the default "warn", without a console warning per message.
      strict: "ignore",
      macros,
    });
  } catch {
    // A ParseError, the budget, or a RangeError from nesting deeper than the stack: all show the source.
    return null;
  } finally {
    env.mathLookupsLeft = messageLeft - Math.min(lookups, limit);
  }
}

/**
 * `$$...$$` on one line: not next to a third `$`, nor to a letter, digit or underscore (Python's
 * `\B`, as in Zulip's pattern); the body does not start with `_` or `$`, and holds `$` only as `\$`.
 */
const INLINE_TEX = /(?<![\p{L}\p{N}_$])\$\$([^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)(?![\p{L}\p{N}_])/uy;

function inlineMathRule(state: StateInline, silent: boolean): boolean {
  const { src, pos } = state;
  if (src.charCodeAt(pos) !== 0x24 /* $ */ || src.charCodeAt(pos + 1) !== 0x24) return false;
  INLINE_TEX.lastIndex = pos;
  const m = INLINE_TEX.exec(src);
  if (!m) return false;
  if (!silent) {
    const html = renderTex(m[1], false, state.env as MathEnv);
    state.push("html_inline", "", 0).content = html ?? `<span class="tex-error">$$${escapeHtml(m[1])}$$</span>`;
  }
  state.pos += m[0].length;
  return true;
}

/** Registers inline `$$...$$` (ahead of emphasis, mentions and emoji, so TeX stays TeX). */
export function mathPlugin(md: MarkdownIt): void {
  md.inline.ruler.before("emphasis", "zulip_math", inlineMathRule);
}

/** Fenced blocks of display math: ```` ```math ```` only (```tex and ```latex are TeX code, as in Zulip). */
export const MATH_FENCE_LANGUAGES = new Set(["math"]);

/** A math block: each paragraph (split on a blank line) one display formula in its own `<p>`. */
export function renderMathBlock(content: string, env: object): string {
  const text = content.endsWith("\n") ? content.slice(0, -1) : content;
  let html = "";
  for (const paragraph of text.split("\n\n")) {
    if (paragraph.trim() === "") continue;
    const rendered = renderTex(paragraph, true, env as MathEnv);
    html += `<p>${rendered ?? `<span class="tex-error">${escapeHtml(paragraph)}</span>`}</p>\n`;
  }
  return html;
}
