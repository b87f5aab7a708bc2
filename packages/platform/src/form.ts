/**
 * Urlencoded forms and query strings read as Django reads them for Zulip (QueryDict): `+` is a
 * space, `%XX` escapes are bytes decoded in the request's charset (the Content-Type's `charset`,
 * else UTF-8) with undecodable bytes replaced by U+FFFD, an invalid escape (`%zz`) stays as it
 * is, and a body that is not valid in its charset is read as Latin-1. fast-querystring (what
 * fastify and @fastify/formbody use) instead keeps a whole value raw when one escape in it is
 * not UTF-8, so `caf%E9` arrived as the literal text `caf%E9`.
 */

export type FormFields = Record<string, string | string[]>;

type BytesDecoder = (bytes: Uint8Array) => string;

const utf8Lenient = new TextDecoder("utf-8", { ignoreBOM: true });
const utf8Strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const decodeUtf8: BytesDecoder = (b) => utf8Lenient.decode(b);
const decodeLatin1: BytesDecoder = (b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("latin1");

/** Python's names for Latin-1, which WHATWG's TextDecoder would read as windows-1252. */
const LATIN1 = new Set(["iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "8859", "cp819", "ascii", "us-ascii"]);
const UTF8 = new Set(["utf-8", "utf8", "u8", "utf"]);

/** The decoder of a Content-Type's charset; null for UTF-8, an absent or an unknown charset (Django keeps UTF-8). */
function charsetDecoder(contentType: string | undefined): BytesDecoder | null {
  const m = contentType ? /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType) : null;
  if (!m) return null;
  const label = m[1].toLowerCase();
  if (UTF8.has(label)) return null;
  if (LATIN1.has(label)) return decodeLatin1;
  try {
    const decoder = new TextDecoder(label, { ignoreBOM: true });
    return decoder.encoding === "utf-8" ? null : (b) => decoder.decode(b);
  } catch {
    return null;
  }
}

/** A urlencoded body in the charset its Content-Type names. */
export function parseFormBody(body: Buffer, contentType: string | undefined): FormFields {
  const decoder = charsetDecoder(contentType);
  let text: string;
  if (decoder) text = decoder(body);
  else {
    try {
      text = utf8Strict.decode(body);
    } catch {
      // Django's fallback for a body that is not UTF-8 ("some user agents are misbehaving").
      text = body.toString("latin1");
    }
  }
  return parseUrlEncoded(text, decoder ?? decodeUtf8);
}

/**
 * Repairs fastify's parse of `url`'s query string (`parsed`) where fast-querystring gave up on a
 * value. Only a query whose parse still holds a `%` can need it, so other requests pay one scan.
 */
export function repairQuery(url: string, parsed: Record<string, unknown>): Record<string, unknown> {
  const q = url.indexOf("?");
  if (q === -1 || url.indexOf("%", q) === -1) return parsed;
  let suspect = false;
  for (const key in parsed) {
    const value = parsed[key];
    if (key.includes("%") || (typeof value === "string" ? value.includes("%") : Array.isArray(value) && value.some((v) => String(v).includes("%")))) {
      suspect = true;
      break;
    }
  }
  if (!suspect) return parsed;
  const hash = url.indexOf("#", q);
  return parseUrlEncoded(url.slice(q + 1, hash === -1 ? undefined : hash), decodeUtf8);
}

/** `a=1&b=&c&a=2` -> `{a: ["1", "2"], b: "", c: ""}` (a repeated name collects its values). */
export function parseUrlEncoded(text: string, decode: BytesDecoder = decodeUtf8): FormFields {
  const out: FormFields = Object.create(null);
  const n = text.length;
  let start = 0;
  while (start < n) {
    let end = text.indexOf("&", start);
    if (end === -1) end = n;
    if (end > start) {
      const eq = text.indexOf("=", start);
      const hasValue = eq !== -1 && eq < end;
      const key = unquotePlus(text.slice(start, hasValue ? eq : end), decode);
      const value = hasValue ? unquotePlus(text.slice(eq + 1, end), decode) : "";
      const prev = out[key];
      if (prev === undefined) out[key] = value;
      else if (Array.isArray(prev)) prev.push(value);
      else out[key] = [prev, value];
    }
    start = end + 1;
  }
  return out;
}

function unquotePlus(s: string, decode: BytesDecoder): string {
  if (s.indexOf("+") !== -1) s = s.replace(/\+/g, " ");
  if (s.indexOf("%") === -1) return s;
  if (decode === decodeUtf8) {
    try {
      return decodeURIComponent(s);
    } catch {
      // An invalid escape or bytes that are not UTF-8: decoded piece by piece below.
    }
  }
  return unquoteBytes(s, decode);
}

const hexValue = (c: number) => (c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1);

/** Python's `unquote(s, encoding, errors="replace")`: runs of escapes are decoded together. */
function unquoteBytes(s: string, decode: BytesDecoder): string {
  let out = "";
  let i = 0;
  const bytes: number[] = [];
  while (i < s.length) {
    if (s.charCodeAt(i) === 37 && i + 2 < s.length) {
      const hi = hexValue(s.charCodeAt(i + 1));
      const lo = hexValue(s.charCodeAt(i + 2));
      if (hi >= 0 && lo >= 0) {
        bytes.push(hi * 16 + lo);
        i += 3;
        continue;
      }
    }
    if (bytes.length) {
      out += decode(Uint8Array.from(bytes));
      bytes.length = 0;
    }
    out += s[i];
    i++;
  }
  if (bytes.length) out += decode(Uint8Array.from(bytes));
  return out;
}
