/**
 * A small HTML tag scanner for checking rendered content: finds every start tag and its
 * attributes (quoted or not, entities decoded) and reports what a browser could execute.
 * It is strict on purpose: anything that looks like a tag counts, even inside text a real parser
 * would treat as text, so an escaping mistake cannot hide.
 */

export interface Tag {
  name: string;
  attrs: Array<[string, string]>;
}

const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", colon: ":", tab: "\t", newline: "\n", nbsp: "\u00a0", lpar: "(", rpar: ")" };

export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);?/gi, (m, e: string) => {
    if (e[0] === "#") {
      const code = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return NAMED[e.toLowerCase()] ?? m;
  });
}

export function scanTags(html: string): Tag[] {
  const tags: Tag[] = [];
  const re = /<([a-zA-Z][^\s/>]*)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(html))) {
    const tag: Tag = { name: m[1].toLowerCase(), attrs: [] };
    let i = re.lastIndex;
    // Attributes up to the closing '>', honouring quotes.
    while (i < html.length && html[i] !== ">") {
      const rest = html.slice(i);
      const a = /^[\s/]*([^\s=>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/.exec(rest);
      if (!a || a[0].length === 0) {
        i++;
        continue;
      }
      tag.attrs.push([a[1].toLowerCase(), decodeEntities(a[2] ?? a[3] ?? a[4] ?? "")]);
      i += a[0].length;
    }
    re.lastIndex = i;
    tags.push(tag);
  }
  return tags;
}

/**
 * `<math>` and `<svg>` themselves are not here: every formula KaTeX renders (as Zulip's do) is
 * MathML, some with SVG paths. What would make them run script is caught anyway: a script or
 * style element inside, an event handler or a scripted URL on any element, and the two elements
 * that carry HTML into them (`foreignObject`, `annotation-xml`).
 */
const DANGEROUS_TAGS = new Set(["script", "iframe", "frame", "frameset", "object", "embed", "applet", "style", "link", "meta", "base", "form", "input", "button", "textarea", "select", "foreignobject", "annotation-xml", "template", "portal", "xml"]);
const URL_ATTRS = new Set(["href", "src", "action", "formaction", "xlink:href", "data", "poster", "background", "srcset", "ping", "lowsrc", "dynsrc", "cite", "longdesc", "usemap"]);

/** What in `html` could run script or load active content; empty when it is safe to show. */
export function executableParts(html: string): string[] {
  const found: string[] = [];
  for (const tag of scanTags(html)) {
    if (DANGEROUS_TAGS.has(tag.name)) found.push(`<${tag.name}>`);
    for (const [name, value] of tag.attrs) {
      if (name.startsWith("on")) found.push(`<${tag.name} ${name}=...>`);
      const compact = value.replace(/[\s\u0000-\u001f]/g, "").toLowerCase();
      if (URL_ATTRS.has(name) && /^(javascript|vbscript|livescript):|^data:(text\/html|image\/svg|application)/.test(compact)) {
        found.push(`<${tag.name} ${name}="${value.slice(0, 40)}">`);
      }
      if (name === "style" && /expression\(|javascript:|url\(/i.test(value)) found.push(`<${tag.name} style="${value.slice(0, 40)}">`);
      if (name === "srcdoc") found.push(`<${tag.name} srcdoc>`);
    }
  }
  return found;
}
