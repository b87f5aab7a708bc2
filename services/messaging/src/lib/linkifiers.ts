import { RE2JS } from "re2js";

/** A linkifier ready to run: RE2 semantics (linear time, as accounts validated it). */
export interface CompiledLinkifier {
  re: RE2JS;
  template: string;
  groups: string[];
}

type LinkifierList = Array<{ pattern: string; url_template: string }>;

/** Compiled lists by the list they came from: the accounts client hands out one list per realm while it is cached. */
const compiled = new WeakMap<LinkifierList, CompiledLinkifier[]>();

export function compileLinkifiers(list: LinkifierList): CompiledLinkifier[] {
  const hit = compiled.get(list);
  if (hit) return hit;
  const out: CompiledLinkifier[] = [];
  for (const l of list) {
    try {
      const re = RE2JS.compile(l.pattern);
      out.push({ re, template: l.url_template, groups: Object.keys(re.namedGroups()) });
    } catch {
      // A pattern accounts accepted but we cannot compile links nothing.
    }
  }
  compiled.set(list, out);
  return out;
}

const OPS: Record<string, { first: string; sep: string; named: boolean; ifEmpty: string; reserved: boolean }> = {
  "": { first: "", sep: ",", named: false, ifEmpty: "", reserved: false },
  "+": { first: "", sep: ",", named: false, ifEmpty: "", reserved: true },
  "#": { first: "#", sep: ",", named: false, ifEmpty: "", reserved: true },
  ".": { first: ".", sep: ".", named: false, ifEmpty: "", reserved: false },
  "/": { first: "/", sep: "/", named: false, ifEmpty: "", reserved: false },
  ";": { first: ";", sep: ";", named: true, ifEmpty: "", reserved: false },
  "?": { first: "?", sep: "&", named: true, ifEmpty: "=", reserved: false },
  "&": { first: "&", sep: "&", named: true, ifEmpty: "=", reserved: false },
};

function encode(value: string, reserved: boolean): string {
  if (reserved) return encodeURI(value).replace(/%25([0-9A-Fa-f]{2})/g, "%$1");
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

/** RFC 6570 expansion of string variables (every operator; prefix modifiers). */
export function expandUrlTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]*)\}/g, (_m, body: string) => {
    const op = body && OPS[body[0]] && body[0] !== "" ? body[0] : "";
    const spec = OPS[op];
    const parts: string[] = [];
    for (const item of (op ? body.slice(1) : body).split(",")) {
      const [, name, prefix] = /^([^:*]+)(?::(\d+))?\*?$/.exec(item) ?? [];
      if (!name || values[name] === undefined) continue;
      let v = values[name];
      if (prefix) v = Array.from(v).slice(0, Number(prefix)).join("");
      const enc = encode(v, spec.reserved);
      parts.push(spec.named ? (v === "" ? name + spec.ifEmpty : `${name}=${enc}`) : enc);
    }
    return parts.length ? spec.first + parts.join(spec.sep) : "";
  });
}

export interface LinkMatch {
  start: number;
  end: number;
  url: string;
}

// Zulip only links a match standing on its own: after a start, a space or an opening mark,
// and not running into a word character.
const BEFORE_OK = /[\s'"(,:<]/;
const WORD = /[A-Za-z0-9_]/;

/** Non-overlapping matches in `text`; earlier linkifiers win, as the organization ordered them. */
export function findLinkifierMatches(text: string, linkifiers: CompiledLinkifier[]): LinkMatch[] {
  const taken: LinkMatch[] = [];
  for (const l of linkifiers) {
    const m = l.re.matcher(text);
    while (m.find()) {
      const start = m.start();
      const end = m.end();
      if (end === start) continue;
      if (start > 0 && !BEFORE_OK.test(text[start - 1])) continue;
      if (end < text.length && WORD.test(text[end])) continue;
      if (taken.some((t) => start < t.end && end > t.start)) continue;
      const values: Record<string, string> = {};
      for (const g of l.groups) values[g] = m.group(g) ?? "";
      taken.push({ start, end, url: expandUrlTemplate(l.template, values) });
    }
  }
  return taken.sort((a, b) => a.start - b.start);
}

export interface TopicLink {
  text: string;
  url: string;
}

// Bare web addresses in a topic, as Zulip makes them navigable: up to a space or closing mark.
const TOPIC_URL = /\bhttps?:\/\/[^\s!;),'"]+/g;

// Schemes a browser runs or reads locally instead of navigating; the content renderer
// (markdown-it's link check) drops such links the same way.
const SCRIPTED_SCHEME = /^(?:vbscript|javascript|file|data):/;

/** Whether a linkifier's URL may be a link (not `javascript:` and the like). */
function navigableUrl(url: string): boolean {
  return !SCRIPTED_SCHEME.test(url.trim().toLowerCase());
}

/**
 * Zulip's topic_links: the linkifier matches in a topic (earlier linkifiers first, as in
 * content), then its bare web addresses where no linkifier matched, in the order they appear.
 * A match whose URL would run script when clicked (an administrator's `javascript:{id}`
 * template) is not a link, as it is not one in content: clients put these URLs in `href`s.
 */
export function topicLinks(topic: string, linkifiers: CompiledLinkifier[]): TopicLink[] {
  if (topic === "") return [];
  const found = findLinkifierMatches(topic, linkifiers).filter((m) => navigableUrl(m.url));
  for (const m of topic.matchAll(TOPIC_URL)) {
    const start = m.index;
    const end = start + m[0].length;
    if (!found.some((t) => start < t.end && end > t.start)) found.push({ start, end, url: m[0] });
  }
  return found.sort((a, b) => a.start - b.start).map((t) => ({ text: topic.slice(t.start, t.end), url: t.url }));
}
