/**
 * A small HTML tree for the edit-history diff (lib/html-diff.ts): rendered message content is
 * well formed, so a tag scanner is enough. Text is held decoded and escaped again on output.
 */

export const VOID_TAGS = new Set(["area", "base", "basefont", "br", "col", "embed", "frame", "hr", "img", "input", "isindex", "link", "meta", "param", "source", "track", "wbr"]);

export interface Element {
  tag: string;
  attrs: Array<[string, string]>;
  /** Text before the first child. */
  text: string;
  children: Element[];
  /** Text after this element, before its next sibling. */
  tail: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === "#") {
      const code = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

export const escapeText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
export const escapeAttr = (s: string) => escapeText(s).replace(/"/g, "&quot;");

const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*(\/?)>|<!--[\s\S]*?-->/g;
const ATTR = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

/** Parses a fragment into a `div` holding it (lxml's fragment_fromstring with create_parent). */
export function parseFragment(html: string): Element {
  const root: Element = { tag: "div", attrs: [], text: "", children: [], tail: "" };
  const stack: Element[] = [root];
  let last: Element | null = null; // where text goes: the open element's text, or a closed child's tail
  const addText = (t: string) => {
    if (!t) return;
    const text = decodeEntities(t);
    if (last) last.tail += text;
    else stack[stack.length - 1].text += text;
  };
  let pos = 0;
  for (const m of html.matchAll(TAG)) {
    addText(html.slice(pos, m.index));
    pos = m.index! + m[0].length;
    if (m[0].startsWith("<!--")) continue;
    const [, closing, rawName, rawAttrs, selfClosing] = m;
    const tag = rawName.toLowerCase();
    if (closing) {
      const at = stack.map((e) => e.tag).lastIndexOf(tag);
      if (at <= 0) continue;
      last = stack[at];
      stack.length = at;
      continue;
    }
    const attrs: Array<[string, string]> = [];
    for (const a of (rawAttrs ?? "").matchAll(ATTR)) attrs.push([a[1].toLowerCase(), decodeEntities(a[2] ?? a[3] ?? a[4] ?? "")]);
    const el: Element = { tag, attrs, text: "", children: [], tail: "" };
    stack[stack.length - 1].children.push(el);
    if (VOID_TAGS.has(tag) || selfClosing) last = el;
    else {
      stack.push(el);
      last = null;
    }
  }
  addText(html.slice(pos));
  return root;
}

export function serialize(el: Element): string {
  const attrs = el.attrs.map(([k, v]) => ` ${k}="${escapeAttr(v)}"`).join("");
  if (VOID_TAGS.has(el.tag)) return `<${el.tag}${attrs}>${escapeText(el.tail)}`;
  return `<${el.tag}${attrs}>${escapeText(el.text)}${el.children.map(serialize).join("")}</${el.tag}>${escapeText(el.tail)}`;
}
