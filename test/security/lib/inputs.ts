import fc from "fast-check";
import type { ParamSpec, RouteDef } from "@chat/contracts";

/**
 * Generated bad requests for one contract route. A request is a list of form fields already in
 * wire form (percent-encoded), so that it can carry what a well-behaved client never sends:
 * invalid UTF-8, a lone `%`, a parameter twice.
 */

/** A value already percent-encoded for the wire. */
export interface Raw {
  raw: string;
}
export type WireValue = string | Raw;

export interface FuzzRequest {
  method: string;
  /** Path below `/api/v1` with path parameters filled in (already encoded). */
  path: string;
  fields: Array<[string, WireValue]>;
  /** Replaces the form body (non-GET), with its content type. */
  body?: { contentType: string; data: string };
  /** What is wrong with it: `<category>:<parameter>`. */
  mutation: string;
}

/** Percent-encodes the UTF-8 bytes of a string (lone surrogates become U+FFFD, as in any client). */
export function pct(value: string): string {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export const wire = (v: WireValue) => (typeof v === "string" ? pct(v) : v.raw);

export function encodeFields(fields: Array<[string, WireValue]>): string {
  return fields.map(([k, v]) => `${pct(k)}=${wire(v)}`).join("&");
}

// ---------------------------------------------------------------------------------------------
// Payload families (the list), each a fast-check arbitrary of wire values.

export const SQL_INJECTION = [
  "' OR '1'='1",
  "1 OR 1=1",
  "1; DROP TABLE users; --",
  "'; SELECT pg_sleep(2); --",
  "1) UNION SELECT NULL, version() --",
  "%' --",
  "\\'; --",
  "$1",
  "1::text",
  '"; DELETE FROM messages; --',
];

export const HTML_INJECTION = [
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  '"><svg/onload=alert(1)>',
  "javascript:alert(1)",
  "<iframe srcdoc='<script>alert(1)</script>'>",
  "{{constructor.constructor('alert(1)')()}}",
  "<a href=\"javascript:alert(1)\">x</a>",
  "</textarea><script>alert(1)</script>",
];

export const UNICODE_EDGES = [
  "\u202egnp.exe",
  "\u200b",
  "\ufeff",
  "e\u0301".repeat(300),
  "👩‍👩‍👧‍👦",
  "\ud83d",
  "\udc00x",
  "𝕏𝕐",
  "１２３",
  "İı",
  "\u2028\u2029",
  "\r\n\t",
  "\u00a0",
  "ｓｔｒｅａｍ",
  "\u0007\u001b[31m",
];

/** Byte sequences that are not valid UTF-8, or not valid percent-encoding at all. */
export const RAW_BYTES: Raw[] = ["%FF", "%C0%AF", "%ED%A0%80", "%E2%82", "%F4%90%80%80", "%", "%zz", "a%00b"].map((raw) => ({ raw }));

export const NULL_BYTES = ["\u0000", "a\u0000b", "1\u0000", "[1]\u0000", "\u0000<script>"];

const HUGE_NUMBERS = ["9".repeat(30), "-9223372036854775809", "9223372036854775808", "2147483648", "9007199254740993", "1e309", "-1e309", "4294967296"];

/** Long, deep and out-of-range JSON: what walks a parsed value (recursion, per-level copies) must survive. */
export const HUGE_JSON = [
  `[${"1,".repeat(50_000)}1]`,
  "[".repeat(20_000) + "]".repeat(20_000),
  '{"a":'.repeat(10_000) + "1" + "}".repeat(10_000),
  `[${HUGE_NUMBERS.join(",")}]`,
  `["${"x".repeat(100_000)}"]`,
];

export function hugeValues(kind: ParamSpec["kind"]): fc.Arbitrary<WireValue> {
  const common = [fc.constant("x".repeat(100_000)), fc.constant("😀".repeat(20_000))];
  if (kind === "int") return fc.oneof(fc.constantFrom(...HUGE_NUMBERS), ...common);
  if (kind === "json") return fc.oneof(fc.constantFrom(...HUGE_JSON), ...common);
  return fc.oneof(...common);
}

export function wrongTypes(kind: ParamSpec["kind"]): fc.Arbitrary<WireValue> {
  switch (kind) {
    case "int":
      return fc.constantFrom("abc", "1.5", "true", "[1]", "{}", "", " 1", "0x10", "1e2", "null", "-", "+1", "NaN", "Infinity", '"1"');
    case "bool":
      return fc.constantFrom("yes", "2", "[]", "", "null", "TRUE", "1.0", '"true"', "{}", "on");
    case "json":
      return fc.constantFrom("abc", "5", '"s"', "{}", "[]", "true", "null", '["a"]', "[1.5]", "[null]", "[[1]]", '{"a":1}', '[{"operator":1}]', "-1");
    default:
      return fc.constantFrom('["x"]', '{"a":1}', "", "null", "123", "true", " ");
  }
}

const MALFORMED_JSON = ["[1,2", '{"a":', "[1,,2]", "NaN", "[undefined]", "'x'", "[1]]", "{'a':1}", "\u0000[]", "[1,]", '{"a":1,}', "//[]", "[0x1]", "[01]"];

/** Any value at all, from every family at once: what a hostile client sends. */
export function anything(kind: ParamSpec["kind"]): fc.Arbitrary<WireValue> {
  return fc.oneof(
    wrongTypes(kind),
    fc.constantFrom(...MALFORMED_JSON),
    hugeValues(kind),
    fc.constantFrom(...NULL_BYTES),
    fc.constantFrom(...UNICODE_EDGES),
    fc.constantFrom(...RAW_BYTES),
    fc.constantFrom(...SQL_INJECTION),
    fc.constantFrom(...HTML_INJECTION),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.json({ maxDepth: 3 }),
    fc.integer().map(String),
  );
}

export const CATEGORIES = ["wrong-type", "malformed-json", "huge", "null-byte", "unicode", "invalid-utf8", "sql", "html", "missing", "duplicate"] as const;
export type Category = (typeof CATEGORIES)[number];

function valueFor(category: Category, kind: ParamSpec["kind"]): fc.Arbitrary<WireValue> {
  switch (category) {
    case "wrong-type":
      return wrongTypes(kind);
    case "malformed-json":
      return fc.constantFrom(...MALFORMED_JSON);
    case "huge":
      return hugeValues(kind);
    case "null-byte":
      return fc.constantFrom(...NULL_BYTES);
    case "unicode":
      return fc.oneof(fc.constantFrom(...UNICODE_EDGES), fc.string({ unit: "binary", minLength: 1, maxLength: 30 }));
    case "invalid-utf8":
      return fc.constantFrom(...RAW_BYTES);
    case "sql":
      return fc.constantFrom(...SQL_INJECTION);
    case "html":
      return fc.constantFrom(...HTML_INJECTION);
    default:
      return anything(kind);
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

/** Plausible values, so that a request fails because of the mutated parameter, not the others. */
export type Baseline = (route: RouteDef, name: string, spec: ParamSpec) => string | undefined;

const paramsOf = (route: RouteDef) => Object.entries(route.params) as Array<[string, ParamSpec]>;

function fillPath(route: RouteDef, values: Record<string, WireValue>): string {
  return route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = values[name];
    return v === undefined ? "" : wire(v);
  });
}

/** The baseline request with parameter `target` replaced (or dropped, or doubled). */
function build(route: RouteDef, baseline: Baseline, target: string | null, category: Category, value: WireValue | null): FuzzRequest {
  const pathValues: Record<string, WireValue> = {};
  const fields: Array<[string, WireValue]> = [];
  for (const [name, spec] of paramsOf(route)) {
    const base = baseline(route, name, spec);
    let v: WireValue | undefined = base;
    if (name === target) {
      if (category === "missing") v = undefined;
      else if (category !== "duplicate") v = value ?? undefined;
    }
    if (spec.inPath) {
      // A path parameter cannot be missing: an empty segment stands for it.
      pathValues[name] = v ?? "";
      continue;
    }
    if (v === undefined) continue;
    fields.push([name, v]);
    if (name === target && category === "duplicate") fields.push([name, value ?? "2"]);
  }
  return { method: route.method, path: fillPath(route, pathValues), fields, mutation: `${category}:${target ?? "(request)"}` };
}

/**
 * Bad requests for `route`: one parameter at a time gets a value of one category; a required
 * parameter may be dropped; the body may be replaced by something that is not a form.
 */
export function badRequests(route: RouteDef, baseline: Baseline): fc.Arbitrary<FuzzRequest> {
  const params = paramsOf(route);
  const perParam = params.map(([name, spec]) =>
    fc
      .constantFrom(...CATEGORIES.filter((c) => c !== "missing" || spec.isRequired))
      .chain((category) => valueFor(category, spec.kind).map((value) => build(route, baseline, name, category, value))),
  );
  const wholeRequest = fc.oneof(
    // Unknown parameters with hostile values are ignored, never a crash.
    fc.tuple(fc.constantFrom("zzz", "__proto__", "constructor", "x[]", "a.b", ""), anything("string")).map(([k, v]) => {
      const r = build(route, baseline, null, "wrong-type", null);
      r.fields.push([k, v]);
      r.mutation = "unknown-param:(request)";
      return r;
    }),
    // No parameters at all.
    fc.constant(null).map(() => ({ ...build(route, baseline, null, "missing", null), fields: [], mutation: "missing:(all)" })),
  );
  const bodies =
    route.method === "GET"
      ? []
      : [
          fc
            .constantFrom(
              { contentType: "application/json", data: '{"content": "x", "to": [1]' },
              { contentType: "application/json", data: JSON.stringify({ type: "stream", to: 1, content: "x" }) },
              { contentType: "text/plain", data: "\u0000\u0001garbage" },
              { contentType: "multipart/form-data", data: "--x\r\nnot a part" },
              { contentType: "multipart/form-data; boundary=zz", data: '--zz\r\nContent-Disposition: form-data; name="a"\r\n\r\n' },
              { contentType: "application/x-www-form-urlencoded; charset=latin1", data: "%FF%FE=%FF&&&==&a" },
              { contentType: "application/x-www-form-urlencoded", data: "a=%zz&b=%" },
            )
            .map((body) => ({ ...build(route, baseline, null, "wrong-type", null), body, mutation: `body:${body.contentType.split(";")[0]}` })),
        ];
  return fc.oneof(...perParam, wholeRequest, ...bodies);
}

/**
 * One request per parameter and category, so every parameter of every endpoint is exercised
 * whatever the random runs pick: the categories rotate over the parameters. Every JSON parameter
 * also gets every huge JSON value.
 */
export function coverageExamples(route: RouteDef, baseline: Baseline, seed: number): FuzzRequest[] {
  const out: FuzzRequest[] = [];
  const params = paramsOf(route);
  params.forEach(([name, spec], i) => {
    const categories = CATEGORIES.filter((c) => c !== "missing" || spec.isRequired);
    // Two categories per parameter: a rotating one and the required-ness check.
    const picks = new Set([categories[(i + seed) % categories.length], spec.isRequired ? "missing" : "wrong-type"] as Category[]);
    for (const category of picks) {
      const [value] = fc.sample(valueFor(category, spec.kind), { numRuns: 1, seed: seed + i });
      out.push(build(route, baseline, name, category, value));
    }
  });
  if (params.length === 0) out.push({ ...build(route, baseline, null, "missing", null), mutation: "missing:(all)" });
  // Every huge JSON value for every JSON parameter: a random pick once found a 10,000-deep object
  // that only some of them break on.
  for (const [name, spec] of params) {
    if (spec.kind !== "json") continue;
    HUGE_JSON.forEach((value, k) => out.push({ ...build(route, baseline, name, "huge", value), mutation: `huge#${k}:${name}` }));
  }
  return out;
}
