/**
 * The `content_html_diff` of message edit history: Zulip's highlight_html_differences, which is
 * lxml's htmldiff (words compared with Python's difflib, insertions in <ins>, deletions moved to
 * a balanced place in <del>, both then moved inside block elements) wrapped in a <div>, with
 * <ins>/<del> renamed to <span class="highlight_text_inserted|deleted">. A port of that
 * algorithm over the HTML our renderer writes; lxml's parser and serializer quirks (for
 * example how it re-escapes text) are approximated, not reproduced byte for byte.
 */
import { escapeAttr, parseFragment, serialize, VOID_TAGS, type Element } from "./html-tree";

const BLOCK_TAGS = new Set([
  "address", "blockquote", "center", "dir", "div", "dl", "fieldset", "form", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "isindex", "menu",
  "noframes", "noscript", "ol", "p", "pre", "table", "ul", "dd", "dt", "frameset", "li", "tbody", "td", "tfoot", "th", "thead", "tr",
]);

// ---------------------------------------------------------------------------------------------
// lxml.html.diff: tokens

/** Python's html.escape (quote=True), as lxml's diff escapes words and attribute values. */
const pyEscape = (s: string) => escapeAttr(s).replace(/'/g, "&#x27;");

interface Token {
  /** What tokens are compared by. */
  text: string;
  html: string;
  preTags: string[];
  postTags: string[];
  trailingWhitespace: string;
  /** An href: shown only when it changed. */
  hideWhenEqual: boolean;
}

type Chunk = string | { kind: "img"; src: string; tag: string } | { kind: "href"; href: string };

const splitWords = (text: string): string[] => (text.trim() ? (text.match(/\S+(?:\s+|$)/gu) ?? []) : []);

function startTag(el: Element): string {
  return `<${el.tag}${el.attrs.map(([k, v]) => ` ${k}="${pyEscape(v)}"`).join("")}>`;
}

function endTag(el: Element): string {
  return `</${el.tag}>${/^\s/.test(el.tail) ? " " : ""}`;
}

function* flatten(el: Element, skipTag = false): Generator<Chunk> {
  if (!skipTag) yield el.tag === "img" ? { kind: "img", src: el.attrs.find(([k]) => k === "src")?.[1] ?? "", tag: startTag(el) } : startTag(el);
  if (VOID_TAGS.has(el.tag) && !el.text && el.children.length === 0 && !el.tail) return;
  for (const w of splitWords(el.text)) yield pyEscape(w);
  for (const child of el.children) yield* flatten(child);
  const href = el.tag === "a" ? el.attrs.find(([k]) => k === "href")?.[1] : undefined;
  if (href) yield { kind: "href", href };
  if (!skipTag) {
    // Void elements have no end tag in HTML (lxml would write one, which its parser drops).
    if (!VOID_TAGS.has(el.tag)) yield endTag(el);
    for (const w of splitWords(el.tail)) yield pyEscape(w);
  }
}

function splitTrailingWhitespace(word: string): [string, string] {
  const stripped = word.trimEnd();
  return [stripped, word.slice(stripped.length)];
}

function tokenize(html: string): Token[] {
  const cleaned = html.replace(/<\/?(ins|del)\b[^>]*>/gi, "");
  const tokens: Token[] = [];
  let accum: string[] = [];
  let current: Token | null = null;
  const push = (t: Omit<Token, "preTags" | "postTags">) => {
    current = { ...t, preTags: accum, postTags: [] };
    accum = [];
    tokens.push(current);
  };
  for (const chunk of flatten(parseFragment(cleaned), true)) {
    if (typeof chunk !== "string") {
      if (chunk.kind === "img") {
        const [tag, ws] = splitTrailingWhitespace(chunk.tag);
        push({ text: `img: ${chunk.src}`, html: tag, trailingWhitespace: ws, hideWhenEqual: false });
      } else {
        push({ text: chunk.href, html: ` Link: ${chunk.href}`, trailingWhitespace: " ", hideWhenEqual: true });
      }
    } else if (!chunk.startsWith("<")) {
      const [word, ws] = splitTrailingWhitespace(chunk);
      push({ text: word, html: word, trailingWhitespace: ws, hideWhenEqual: false });
    } else if (chunk[1] !== "/") {
      accum.push(chunk);
    } else if (accum.length > 0 || current === null) {
      accum.push(chunk);
    } else {
      (current as Token).postTags.push(chunk);
    }
  }
  if (tokens.length === 0) return [{ text: "", html: "", preTags: accum, postTags: [], trailingWhitespace: "", hideWhenEqual: false }];
  tokens[tokens.length - 1].postTags.push(...accum);
  return tokens;
}

function expandTokens(tokens: Token[], equal = false): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    out.push(...t.preTags);
    if (!equal || !t.hideWhenEqual) out.push(t.html + t.trailingWhitespace);
    out.push(...t.postTags);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Python's difflib.SequenceMatcher (autojunk on), as lxml's InsensitiveSequenceMatcher uses it

type Block = [number, number, number];

function matchingBlocks(a: string[], b: string[]): Block[] {
  const b2j = new Map<string, number[]>();
  b.forEach((x, j) => {
    const list = b2j.get(x);
    if (list) list.push(j);
    else b2j.set(x, [j]);
  });
  if (b.length >= 200) {
    const ntest = Math.floor(b.length / 100) + 1;
    for (const [x, idxs] of [...b2j]) if (idxs.length > ntest) b2j.delete(x);
  }
  const longest = (alo: number, ahi: number, blo: number, bhi: number): Block => {
    let [bi, bj, size] = [alo, blo, 0];
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const next = new Map<number, number>();
      for (const j of b2j.get(a[i]) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > size) [bi, bj, size] = [i - k + 1, j - k + 1, k];
      }
      j2len = next;
    }
    while (bi > alo && bj > blo && a[bi - 1] === b[bj - 1]) [bi, bj, size] = [bi - 1, bj - 1, size + 1];
    while (bi + size < ahi && bj + size < bhi && a[bi + size] === b[bj + size]) size++;
    return [bi, bj, size];
  };
  const found: Block[] = [];
  const queue: Array<[number, number, number, number]> = [[0, a.length, 0, b.length]];
  while (queue.length) {
    const [alo, ahi, blo, bhi] = queue.pop()!;
    const [i, j, k] = longest(alo, ahi, blo, bhi);
    if (!k) continue;
    found.push([i, j, k]);
    if (alo < i && blo < j) queue.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
  }
  found.sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2]);
  const blocks: Block[] = [];
  let [i1, j1, k1] = [0, 0, 0];
  for (const [i2, j2, k2] of found) {
    if (i1 + k1 === i2 && j1 + k1 === j2) k1 += k2;
    else {
      if (k1) blocks.push([i1, j1, k1]);
      [i1, j1, k1] = [i2, j2, k2];
    }
  }
  if (k1) blocks.push([i1, j1, k1]);
  blocks.push([a.length, b.length, 0]);
  // InsensitiveSequenceMatcher: no tiny equal runs amid large changes.
  const threshold = Math.min(2, b.length / 4);
  return blocks.filter(([, , k]) => k > threshold || !k);
}

type Opcode = ["equal" | "replace" | "delete" | "insert", number, number, number, number];

function opcodes(a: string[], b: string[]): Opcode[] {
  const out: Opcode[] = [];
  let [i, j] = [0, 0];
  for (const [ai, bj, size] of matchingBlocks(a, b)) {
    const tag = i < ai && j < bj ? "replace" : i < ai ? "delete" : j < bj ? "insert" : null;
    if (tag) out.push([tag, i, ai, j, bj]);
    [i, j] = [ai + size, bj + size];
    if (size) out.push(["equal", ai, i, bj, j]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// lxml.html.diff: merging

const DEL_START = "\u0000DEL_START";
const DEL_END = "\u0000DEL_END";
const tagName = (chunk: string) => chunk.split(/\s+/)[0].replace(/^[<>/]+|[<>/]+$/g, "");

function splitUnbalanced(chunks: string[]): [string[], string[], string[]] {
  const start: string[] = [];
  const end: string[] = [];
  let stack: Array<[string, number, string]> = [];
  const balanced: Array<string | null> = [];
  for (const chunk of chunks) {
    if (!chunk.startsWith("<")) {
      balanced.push(chunk);
      continue;
    }
    const name = tagName(chunk);
    if (VOID_TAGS.has(name)) {
      balanced.push(chunk);
      continue;
    }
    if (chunk[1] === "/") {
      if (stack.length && stack[stack.length - 1][0] === name) {
        balanced.push(chunk);
        const [, pos, tag] = stack.pop()!;
        balanced[pos] = tag;
      } else if (stack.length) {
        start.push(...stack.map(([, , tag]) => tag));
        stack = [];
        end.push(chunk);
      } else {
        end.push(chunk);
      }
    } else {
      stack.push([name, balanced.length, chunk]);
      balanced.push(null);
    }
  }
  start.push(...stack.map(([, , tag]) => tag));
  return [start, balanced.filter((c): c is string => c !== null), end];
}

function mergeInsert(ins: string[], doc: string[]): void {
  const [start, balanced, end] = splitUnbalanced(ins);
  doc.push(...start);
  if (doc.length && !doc[doc.length - 1].endsWith(" ")) doc[doc.length - 1] += " ";
  doc.push("<ins>");
  if (balanced.length && balanced[balanced.length - 1].endsWith(" ")) balanced[balanced.length - 1] = balanced[balanced.length - 1].slice(0, -1);
  doc.push(...balanced, "</ins> ", ...end);
}

function locateUnbalancedStart(unbalanced: string[], pre: string[], post: string[]): void {
  while (unbalanced.length && post.length) {
    const next = post[0];
    if (next === DEL_START || !next.startsWith("<") || next[1] === "/") break;
    const name = tagName(next);
    if (name === "ins" || name !== tagName(unbalanced[0])) break;
    unbalanced.shift();
    pre.push(post.shift()!);
  }
}

function locateUnbalancedEnd(unbalanced: string[], pre: string[], post: string[]): void {
  while (unbalanced.length && pre.length) {
    const next = pre[pre.length - 1];
    if (next === DEL_END || !next.startsWith("</")) break;
    const name = tagName(next);
    if (name === "ins" || name === "del" || name !== tagName(unbalanced[unbalanced.length - 1])) break;
    unbalanced.pop();
    post.unshift(pre.pop()!);
  }
}

function cleanupDelete(chunks: string[]): string[] {
  for (;;) {
    const at = chunks.indexOf(DEL_START);
    if (at < 0) return chunks;
    const endAt = chunks.indexOf(DEL_END);
    const pre = chunks.slice(0, at);
    const [start, balanced, end] = splitUnbalanced(chunks.slice(at + 1, endAt));
    const post = chunks.slice(endAt + 1);
    locateUnbalancedStart(start, pre, post);
    locateUnbalancedEnd(end, pre, post);
    if (pre.length && !pre[pre.length - 1].endsWith(" ")) pre[pre.length - 1] += " ";
    pre.push("<del>");
    if (balanced.length && balanced[balanced.length - 1].endsWith(" ")) balanced[balanced.length - 1] = balanced[balanced.length - 1].slice(0, -1);
    chunks = [...pre, ...balanced, "</del> ", ...post];
  }
}

function diffTokens(oldTokens: Token[], newTokens: Token[]): string[] {
  const result: string[] = [];
  for (const [op, i1, i2, j1, j2] of opcodes(oldTokens.map((t) => t.text), newTokens.map((t) => t.text))) {
    if (op === "equal") {
      result.push(...expandTokens(newTokens.slice(j1, j2), true));
      continue;
    }
    if (op === "insert" || op === "replace") mergeInsert(expandTokens(newTokens.slice(j1, j2)), result);
    if (op === "delete" || op === "replace") result.push(DEL_START, ...expandTokens(oldTokens.slice(i1, i2)), DEL_END);
  }
  return cleanupDelete(result);
}

// ---------------------------------------------------------------------------------------------
// lxml.html.diff: moving <ins>/<del> inside block elements, then Zulip's renaming

const containsBlock = (el: Element): boolean => BLOCK_TAGS.has(el.tag) || el.children.some(containsBlock);

const bare = (tag: string, text = "", children: Element[] = []): Element => ({ tag, attrs: [], text, children, tail: "" });

function findParent(root: Element, el: Element): Element | null {
  for (const child of root.children) {
    if (child === el) return root;
    const found = findParent(child, el);
    if (found) return found;
  }
  return null;
}

function collect(el: Element, tag: string, out: Element[]): Element[] {
  if (el.tag === tag) out.push(el);
  for (const child of el.children) collect(child, tag, out);
  return out;
}

/** lxml's drop_tag: the element goes, its text, children and tail stay where it was. */
function dropTag(parent: Element, el: Element): void {
  const i = parent.children.indexOf(el);
  const prev = i > 0 ? parent.children[i - 1] : null;
  const lead = el.text + (el.children.length ? "" : el.tail);
  if (prev) prev.tail += lead;
  else parent.text += lead;
  if (el.children.length) el.children[el.children.length - 1].tail += el.tail;
  parent.children.splice(i, 1, ...el.children);
}

/** lxml's _move_el_inside_block: wraps the element's inline runs in `tag`, inside its blocks. */
function moveInsideBlock(el: Element, tag: string): void {
  if (!el.children.some(containsBlock)) {
    el.children = [bare(tag, el.text, el.children)];
    el.text = "";
    return;
  }
  for (const child of [...el.children]) {
    const at = el.children.indexOf(child);
    if (containsBlock(child)) {
      moveInsideBlock(child, tag);
      if (child.tail) {
        el.children.splice(at + 1, 0, bare(tag, child.tail));
        child.tail = "";
      }
    } else {
      el.children[at] = bare(tag, "", [child]);
    }
  }
  if (el.text) {
    el.children.unshift(bare(tag, el.text));
    el.text = "";
  }
}

/** lxml's _fixup_ins_del_tags: `<ins><p>x</p></ins>` becomes `<p><ins>x</ins></p>`. */
function fixupInsDel(root: Element): void {
  for (const tag of ["ins", "del"]) {
    for (const el of collect(root, tag, [])) {
      if (!containsBlock(el)) continue;
      moveInsideBlock(el, tag);
      const parent = findParent(root, el);
      if (parent) dropTag(parent, el);
    }
  }
}

/** Zulip's highlight_html_differences(old, new). */
export function highlightHtmlDifferences(oldHtml: string, newHtml: string): string {
  const diffed = diffTokens(tokenize(oldHtml), tokenize(newHtml)).join("").trim();
  const root = parseFragment(diffed);
  fixupInsDel(root);
  const rename = (el: Element) => {
    if (el.tag === "ins" || el.tag === "del") {
      el.attrs = [["class", el.tag === "ins" ? "highlight_text_inserted" : "highlight_text_deleted"]];
      el.tag = "span";
    }
    el.children.forEach(rename);
  };
  rename(root);
  return serialize({ ...root, tail: "" });
}
