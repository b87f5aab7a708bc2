import { escapeHtml } from "markdown-it/lib/common/utils.mjs";
import { runHighlightJs } from "./highlight-thread";

/**
 * Syntax highlighting of code blocks in Pygments' markup, which is what Zulip's clients style:
 * highlight.js tokenizes, and each of its scopes becomes one of Pygments' short CSS classes
 * (`k`, `nf`, `s2`, ...). Zulip's mobile app shows a code block only when every span in it has a
 * class it knows, so no other class is ever emitted: a scope without a Pygments counterpart takes
 * its enclosing scope's class, or none.
 *
 * Where this differs from Pygments (clients only colour the classes, so this is accepted):
 * - highlight.js leaves most operators, punctuation, plain names and whitespace unscoped; Pygments
 *   marks them `o`, `p`, `n` and `w`. Here they are plain text.
 * - Finer classes are guessed from the token's text: integer/float/hex (`mi`, `mf`, `mh`, ...),
 *   quote style (`s1`, `s2`, `sb`), comment style (`c1`, `cm`, `ch`). Docstrings are ordinary
 *   strings (`s2`, not `sd`), string prefixes such as f"" are part of the string (not `sa`), and
 *   method calls are `n` or `nf` where Pygments says `n`, `nx` or `nb`.
 * - Languages are tokenized by highlight.js's grammar for them, so a construct one side knows and
 *   the other does not (a JSX tag, a new keyword) may be classed differently.
 */

/** Code longer than this is shown unhighlighted. */
const MAX_HIGHLIGHT_LENGTH = 100_000;

/**
 * How long highlighting may take, all of a message's code blocks together; what is not done by
 * then is shown unhighlighted. highlight.js is about linear on ordinary code (10 KB in a few ms),
 * but several of its grammars rescan from every character of some inputs: 20,000 newlines took
 * Haskell's and Nix's 1.4 s, 10,000 characters of plain words C#'s 0.3 s, and 100 KB of them
 * 34 s. So it runs on a thread that is stopped at the deadline (highlight-thread.ts).
 */
const MESSAGE_HIGHLIGHT_MS = 300;

interface HighlightEnv {
  highlightMsLeft?: number;
}

/** highlight.js scope -> Pygments class, for the scopes whose class does not depend on the text. */
const SCOPE_CLASS: Record<string, string> = {
  keyword: "k",
  built_in: "nb",
  type: "kt",
  literal: "kc",
  operator: "o",
  punctuation: "p",
  property: "n",
  regexp: "sr",
  symbol: "ss",
  char: "sc",
  "char.escape": "se",
  subst: "si",
  title: "nf",
  "title.function": "nf",
  "title.function.invoke": "n",
  "title.class": "nc",
  "title.class.inherited": "nc",
  variable: "nv",
  "variable.language": "bp",
  "variable.constant": "no",
  "template-variable": "nv",
  "template-tag": "cp",
  attr: "na",
  attribute: "na",
  // An HTML tag: its brackets are punctuation, its name (scope `name`) a tag.
  tag: "p",
  name: "nt",
  "selector-tag": "nt",
  "selector-class": "nc",
  "selector-id": "nn",
  "selector-attr": "na",
  "selector-pseudo": "nd",
  addition: "gi",
  deletion: "gd",
  section: "gh",
  bullet: "k",
  emphasis: "ge",
  strong: "gs",
  code: "sb",
  "meta.prompt": "gp",
};

/** Per grammar, scopes whose Pygments class differs there. */
const GRAMMAR_SCOPE_CLASS: Record<string, Record<string, string>> = {
  // Keys of objects and mappings are Name.Tag in Pygments' JSON and YAML lexers.
  json: { attr: "nt" },
  yaml: { attr: "nt" },
  // `!important` and at-rules.
  css: { meta: "k" },
  scss: { meta: "k" },
  less: { meta: "k" },
  // `@@ -1 +1 @@`.
  diff: { meta: "gu" },
  // `&amp;`.
  xml: { symbol: "ni" },
};

/** Keywords Pygments' lexers give a finer class: word operators, declarations, imports. */
const JS_KEYWORDS: Record<string, string> = {
  typeof: "ow",
  instanceof: "ow",
  void: "ow",
  delete: "ow",
  new: "ow",
  var: "kd",
  let: "kd",
  const: "kd",
  with: "kd",
  function: "kd",
  class: "kd",
};
const GRAMMAR_KEYWORD_CLASS: Record<string, Record<string, string>> = {
  python: { in: "ow", is: "ow", and: "ow", or: "ow", not: "ow", import: "kn", from: "kn" },
  javascript: JS_KEYWORDS,
  typescript: JS_KEYWORDS,
};

/** `record[key]` when `key` is the record's own (a keyword may well be called `constructor`). */
function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

interface ScopeNode {
  scope: string;
  children: Array<string | ScopeNode>;
}

const HLJS_ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#x27;": "'" };

/**
 * highlight.js's HTML (spans whose class is `hljs-<scope> <sub>_ ...`, `language-<name>` around
 * embedded languages, and escaped text) back into a tree of scopes.
 */
function parseHljsHtml(html: string): ScopeNode {
  const root: ScopeNode = { scope: "", children: [] };
  const stack = [root];
  for (const m of html.matchAll(/<span class="([^"]*)">|<\/span>|[^<]+/g)) {
    const top = stack[stack.length - 1];
    if (m[1] !== undefined) {
      const [first, ...subs] = m[1].split(" ");
      const scope = first.startsWith("hljs-") ? [first.slice(5), ...subs.map((s) => s.replace(/_+$/, ""))].join(".") : "";
      const node: ScopeNode = { scope, children: [] };
      top.children.push(node);
      stack.push(node);
    } else if (m[0] === "</span>") {
      if (stack.length > 1) stack.pop();
    } else {
      top.children.push(m[0].replace(/&(?:amp|lt|gt|quot|#x27);/g, (e) => HLJS_ENTITIES[e]));
    }
  }
  return root;
}

function textOf(node: ScopeNode): string {
  return node.children.map((c) => (typeof c === "string" ? c : textOf(c))).join("");
}

function numberClass(text: string): string {
  if (/^[+-]?0x/i.test(text)) return "mh";
  if (/^[+-]?0b/i.test(text)) return "mb";
  if (/^[+-]?0o/i.test(text)) return "mo";
  if (/^[+-]?\d[\d_]*[lun]?$/i.test(text)) return "mi";
  // (Tested by parts: one pattern for a whole float backtracks on a long run of digits.)
  if (/^[+-]?[\d.]/.test(text) && /[.e]/i.test(text)) return "mf";
  return "m";
}

function stringClass(text: string): string {
  const quote = /^[a-z]{0,2}(["'`])/i.exec(text)?.[1];
  return quote === '"' ? "s2" : quote === "'" ? "s1" : quote === "`" ? "sb" : "s";
}

function commentClass(text: string, grammar: string): string {
  if (grammar === "diff") return text.startsWith("---") ? "gd" : text.startsWith("+++") ? "gi" : "gh";
  if (text.startsWith("#!")) return "ch";
  if (/^(\/\*|\(\*|\{-|<!--|%\{|--\[\[)/.test(text)) return "cm";
  return "c1";
}

function metaClass(text: string): string {
  if (text.startsWith("#!")) return "ch";
  // Decorators and annotations.
  if (/^@[\p{L}_]/u.test(text)) return "nd";
  return "cp";
}

/** The Pygments class of `node` inside a span of class `outer` (null: plain text). */
function classOf(node: ScopeNode, outer: string | null, grammar: string): string | null {
  const { scope } = node;
  // Inside a preprocessor line its keyword stays part of it and a string is the file name; a
  // keyword inside a literal (JSON's true) stays the literal.
  if (outer === "cp" && scope === "keyword") return "cp";
  if (outer === "cp" && scope === "string") return "cpf";
  if (outer === "kc" && scope === "keyword") return "kc";
  const special = own(own(GRAMMAR_SCOPE_CLASS, grammar) ?? {}, scope);
  if (special) return special;
  switch (scope) {
    case "keyword":
      return own(own(GRAMMAR_KEYWORD_CLASS, grammar) ?? {}, textOf(node)) ?? "k";
    case "number":
      return numberClass(textOf(node));
    case "string":
      return stringClass(textOf(node));
    case "comment":
      return commentClass(textOf(node), grammar);
    case "meta":
      return metaClass(textOf(node));
  }
  return own(SCOPE_CLASS, scope) ?? outer;
}

/** Spans in Pygments' manner: one class each, no nesting, adjacent equal classes merged, none across a line break. */
class PygmentsWriter {
  private html = "";
  private cls: string | null = null;
  private text = "";

  add(text: string, cls: string | null): void {
    if (cls !== this.cls) this.flush();
    this.cls = cls;
    this.text += text;
  }

  private flush(): void {
    if (this.text === "") return;
    const cls = this.cls;
    this.html +=
      cls === null
        ? escapeHtml(this.text)
        : this.text
            .split("\n")
            .map((line) => (line === "" ? "" : `<span class="${cls}">${escapeHtml(line)}</span>`))
            .join("\n");
    this.text = "";
  }

  finish(): string {
    this.flush();
    return this.html;
  }
}

function writeNode(node: ScopeNode, cls: string | null, grammar: string, out: PygmentsWriter): void {
  for (const child of node.children) {
    // Spaces between a tag's parts are not its punctuation (Pygments calls them whitespace).
    if (typeof child === "string") out.add(child, cls === "p" && /^\s+$/.test(child) ? null : cls);
    else writeNode(child, classOf(child, cls, grammar), grammar, out);
  }
}

/**
 * The inside of `<code>` for `code` in the given highlight.js grammar (null: escaped text only);
 * `env` carries the message's time left for highlighting from one code block to the next.
 */
export function highlightCode(code: string, grammar: string | null, env: object): string {
  const budget = env as HighlightEnv;
  const msLeft = budget.highlightMsLeft ?? MESSAGE_HIGHLIGHT_MS;
  if (grammar === null || code.length > MAX_HIGHLIGHT_LENGTH || msLeft <= 0) return escapeHtml(code);
  const start = performance.now();
  const html = runHighlightJs(code, grammar, msLeft);
  budget.highlightMsLeft = msLeft - (performance.now() - start);
  if (html === null) return escapeHtml(code);
  const out = new PygmentsWriter();
  writeNode(parseHljsHtml(html), null, grammar, out);
  return out.finish();
}
