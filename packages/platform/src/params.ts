import type { z } from "zod";
import type { ParamSpec, ParamSpecs, ParsedParams } from "@chat/contracts";
import { ApiError, badRequest, missingParam } from "./errors";

/** Where a request's parameters come from. `body` holds only form (urlencoded / multipart) fields. */
export interface RawParams {
  body: Record<string, unknown>;
  query: Record<string, unknown>;
  path: Record<string, string>;
}

export interface ParseResult<S extends ParamSpecs> {
  values: ParsedParams<S>;
  /** Names sent but not consumed, sorted: Zulip's `ignored_parameters_unsupported`. */
  ignored: string[];
}

/** Parameters every endpoint accepts without reporting them as ignored. */
const UNIVERSAL = new Set(["client"]);

const has = (o: Record<string, unknown>, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** Repeated fields (`a=1&a=2`) count once, with the last value, as Django's QueryDict does. */
function lastValue(v: unknown): unknown {
  return Array.isArray(v) ? v[v.length - 1] : v;
}

/**
 * Reads a route's parameters the way Zulip's `typed_endpoint` does: form body first, then the
 * query string, for any method; typed values are strict JSON; aliases; Zulip's messages.
 */
export function parseParams<S extends ParamSpecs>(specs: S, raw: RawParams): ParseResult<S> {
  const values: Record<string, unknown> = {};
  const consumed = new Set<string>(UNIVERSAL);
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.inPath) {
      values[name] = decodePath(name, spec, raw.path[name]);
      continue;
    }
    const present = [name, ...spec.aliases].filter((n) => has(raw.body, n) || has(raw.query, n));
    if (present.length > 1) {
      throw new ApiError("REQUEST_CONFUSING_VAR", `Can't decide between '${present[0]}' and '${present[1]}' arguments`);
    }
    if (present.length === 0) {
      if (spec.isRequired && spec.defaultValue === undefined) throw missingParam(name);
      // A copy, so a handler that mutates a default cannot leak it into the next request.
      values[name] = spec.defaultValue === undefined ? undefined : structuredClone(spec.defaultValue);
      continue;
    }
    const used = present[0];
    consumed.add(used);
    const value = lastValue(has(raw.body, used) ? raw.body[used] : raw.query[used]);
    values[name] = decode(name, spec, value);
  }
  const sent = new Set([...Object.keys(raw.body), ...Object.keys(raw.query)]);
  const ignored = [...sent].filter((n) => !consumed.has(n)).sort();
  return { values: values as ParsedParams<S>, ignored };
}

/**
 * Path segments are matched by the URL, not parsed as JSON: a non-numeric id is a URL that
 * does not exist (Zulip's URL patterns only match digits there), so it answers 404.
 */
function decodePath(name: string, spec: ParamSpec, value: string | undefined): unknown {
  if (value === undefined) throw missingParam(name);
  if (spec.kind === "int") {
    if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new ApiError("BAD_REQUEST", "Not Found", { status: 404 });
    return validate(name, spec, Number(value));
  }
  if (spec.kind === "string") return validate(name, spec, value);
  return decode(name, spec, value);
}

function decode(name: string, spec: ParamSpec, value: unknown): unknown {
  if (typeof value !== "string") {
    // A multipart file part where a field was expected.
    throw badRequest(`Invalid ${name}`);
  }
  if (spec.kind === "string") return validate(name, spec, value);
  let decoded: unknown;
  try {
    decoded = JSON.parse(value);
  } catch {
    throw badRequest(`${name} is not valid JSON`);
  }
  if (decoded === null) {
    if (spec.isNullable) return null;
    throw badRequest(notA(name, spec));
  }
  // `1e3` and `5.0` are floats to Python's json, so Zulip refuses them where an integer is due.
  if (spec.kind === "int" && !(typeof decoded === "number" && Number.isSafeInteger(decoded) && !FLOAT_SYNTAX.test(value))) {
    throw badRequest(`${name} is not an integer`);
  }
  if (spec.kind === "bool" && typeof decoded !== "boolean") throw badRequest(`${name} is not a boolean`);
  const result = validate(name, spec, decoded);
  if (spec.kind === "json" && FLOAT_SYNTAX.test(value)) refuseIntegersWrittenAsFloats(name, spec, value);
  if (spec.kind === "json" && MAY_HOLD_PROTO_KEY.test(value)) refuseProtoKey(name, spec, decoded);
  return result;
}

/** A digit then a fraction or an exponent: the text may hold a number Python reads as a float. */
const FLOAT_SYNTAX = /[0-9][.eE]/;
/** JSON strings (skipped whole) and numbers; run only over text JSON.parse accepted. */
const JSON_TOKENS = /"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/g;

/**
 * JSON.parse reads `[93.0]` and `[93]` alike, but Python's json (so Zulip) reads `93.0` and
 * `93e0` as floats, which an integer field refuses. A second parse with every such integral
 * float made fractional shows which of them the schema wanted as integers. Only text with
 * float syntax pays for it, and only when such a number is there.
 */
function refuseIntegersWrittenAsFloats(name: string, spec: ParamSpec, text: string): void {
  let changed = false;
  const probe = text.replace(JSON_TOKENS, (token) => {
    if (token.charCodeAt(0) === 34 || !/[.eE]/.test(token)) return token;
    const n = Number(token);
    if (!Number.isInteger(n)) return token;
    changed = true;
    // Exactly representable below 2**52; beyond that any fraction will do.
    return Math.abs(n) < 2 ** 52 ? `${n}.5` : "0.5";
  });
  if (!changed) return;
  const result = spec.schema.safeParse(JSON.parse(probe));
  if (result.success) return;
  const path = integerIssuePath(result.error.issues, []);
  if (path) throw badRequest(`${renderPath(name, path)} is not an integer`);
  // A schema that takes any number but checks for integers itself refuses them in its own words.
  if (result.error.issues[0].code === "custom") throw badRequest(describeIssue(name, spec.schema, result.error.issues[0]));
}

/** Where an integer was expected and a fraction found, looking into every branch of a union. */
function integerIssuePath(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[]): PropertyKey[] | null {
  for (const issue of issues) {
    if (issue.code === "invalid_type" && issue.expected.includes("int")) return [...prefix, ...issue.path];
    if (issue.code === "invalid_union") {
      for (const branch of issue.errors) {
        const path = integerIssuePath(branch, [...prefix, ...issue.path]);
        if (path) return path;
      }
    }
  }
  return null;
}

/** Text without these cannot hold a key `__proto__` (written plainly or with escapes). */
const MAY_HOLD_PROTO_KEY = /__proto__|\\u/;

/**
 * JSON.parse makes a key `__proto__` an own property like any other, as Python's json (so
 * Zulip) does, but zod leaves it out of what it parses (so that it cannot replace a prototype):
 * a handler would act on the value without it, as if it had not been sent (`{"__proto__": true}`
 * an empty dict). So it is refused, in the route's words where it has them.
 */
function refuseProtoKey(name: string, spec: ParamSpec, decoded: unknown): void {
  // An explicit stack whose entries point at their parents, as findNullByte's.
  interface Step {
    value: unknown;
    key: PropertyKey | null;
    parent: Step | null;
  }
  const stack: Step[] = [{ value: decoded, key: null, parent: null }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    const value = step.value;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: i, parent: step });
    } else if (value && typeof value === "object") {
      if (Object.hasOwn(value, "__proto__")) {
        const path: PropertyKey[] = [];
        for (let s: Step | null = step; s && s.key !== null; s = s.parent) path.push(s.key);
        throw badRequest(spec.protoKeyError ?? `Argument "__proto__" at ${renderPath(name, path.reverse())} is unexpected`);
      }
      for (const [k, v] of Object.entries(value)) stack.push({ value: v, key: k, parent: step });
    }
  }
}

/**
 * Runs the route's schema first, so a service's own wording wins (for example messaging's
 * `Message must not contain null bytes`); then refuses NUL characters anywhere, which
 * PostgreSQL cannot store in text or jsonb and would otherwise turn into a 500.
 */
function validate(name: string, spec: ParamSpec, decoded: unknown): unknown {
  const result = spec.schema.safeParse(decoded, { reportInput: true });
  if (!result.success) throw badRequest(describeIssue(name, spec.schema, result.error.issues[0]));
  const nul = findNullByte(result.data);
  if (nul) throw badRequest(`${renderPath(name, nul)} must not contain null bytes`);
  return result.data;
}

/**
 * The path to the first string (value or key) holding a NUL, or null. A loop over an explicit
 * stack, each entry pointing at its parent: a value parsed from 10,000 nested brackets must not
 * overflow the call stack or copy its path at every level.
 */
function findNullByte(root: unknown): PropertyKey[] | null {
  interface Step {
    value: unknown;
    key: PropertyKey | null;
    parent: Step | null;
  }
  const pathOf = (step: Step): PropertyKey[] => {
    const path: PropertyKey[] = [];
    for (let s: Step | null = step; s && s.key !== null; s = s.parent) path.push(s.key);
    return path.reverse();
  };
  const stack: Step[] = [{ value: root, key: null, parent: null }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    if (typeof step.key === "string" && step.key.includes("\u0000")) return pathOf(step);
    const value = step.value;
    if (typeof value === "string") {
      if (value.includes("\u0000")) return pathOf(step);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: i, parent: step });
    } else if (value && typeof value === "object") {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i][1], key: entries[i][0], parent: step });
    }
  }
  return null;
}

/** Why JSON `null` is refused: not the type the parameter is (Zulip's "is not a dict", "is not a list"). */
function notA(name: string, spec: ParamSpec): string {
  if (spec.kind === "int") return `${name} is not an integer`;
  if (spec.kind === "bool") return `${name} is not a boolean`;
  const type = spec.kind === "json" ? TYPE_NAMES[schemaAt(spec.schema, [])?._zod.def.type ?? ""] : undefined;
  return type ? `${name} is not ${type}` : `${name} is not valid JSON`;
}

/** Renders `drafts[0]["type"]` the way Zulip names nested positions (JSON-encoded keys). */
export function renderPath(name: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, key) => (typeof key === "number" ? `${acc}[${key}]` : `${acc}[${JSON.stringify(String(key))}]`), name);
}

const TYPE_NAMES: Record<string, string> = {
  array: "a list",
  tuple: "a list",
  object: "a dict",
  record: "a dict",
  map: "a dict",
  string: "a string",
  number: "a float",
  int: "an integer",
  bigint: "an integer",
  boolean: "a boolean",
};

type ZodInternals = { _zod: { def: Record<string, any>; bag?: Record<string, unknown> } };

/** The sub-schema at `path`, to tell an integer field from a float one in messages. */
function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): ZodInternals | null {
  let s = schema as unknown as ZodInternals | undefined;
  const unwrap = () => {
    for (let i = 0; s && i < 20; i++) {
      const d = s._zod.def;
      if (["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"].includes(d.type)) s = d.innerType;
      else if (d.type === "pipe") s = d.in;
      else if (d.type === "lazy") s = d.getter();
      else break;
    }
  };
  unwrap();
  for (const key of path) {
    if (!s) return null;
    const d = s._zod.def;
    if (d.type === "array") s = d.element;
    else if (d.type === "object") s = d.shape?.[key as string];
    else if (d.type === "record") s = d.valueType;
    else if (d.type === "tuple") s = d.items?.[key as number] ?? d.rest;
    else return null;
    unwrap();
  }
  return s ?? null;
}

function isIntSchema(s: ZodInternals | null): boolean {
  if (!s) return false;
  const formats = [s._zod.bag?.format, s._zod.def.format, ...(s._zod.def.checks ?? []).map((c: ZodInternals) => c._zod.def.format)];
  return formats.some((f) => typeof f === "string" && /int/.test(f));
}

function describeIssue(name: string, schema: z.ZodType, issue: z.core.$ZodIssue | undefined): string {
  if (!issue) return `Invalid ${name}`;
  const where = renderPath(name, issue.path);
  // Parsed with reportInput, so only an absent key has no input.
  if (issue.path.length > 0 && issue.code !== "custom" && issue.code !== "unrecognized_keys" && (issue as { input?: unknown }).input === undefined) {
    return `${where} field is missing`;
  }
  switch (issue.code) {
    case "custom":
      return issue.message.includes("{name}") ? issue.message.replaceAll("{name}", where) : issue.message;
    case "invalid_type": {
      let expected: string = issue.expected;
      if (expected === "number" && isIntSchema(schemaAt(schema, issue.path))) expected = "int";
      return `${where} is not ${TYPE_NAMES[expected] ?? `a ${expected}`}`;
    }
    case "too_big":
      if (issue.origin === "string") return `${where} is too long (limit: ${issue.maximum} characters)`;
      if (issue.origin === "array" || issue.origin === "set") return `${where} has too many items (limit: ${issue.maximum})`;
      return `${where} is too large`;
    case "too_small":
      if (issue.origin === "string" && Number(issue.minimum) <= 1) return `${where} cannot be blank`;
      if (issue.origin === "string" || issue.origin === "array" || issue.origin === "set") return `${where} is too short`;
      return `${where} is too small`;
    case "invalid_format":
      return `${where} has invalid format`;
    case "unrecognized_keys":
      return `Argument "${issue.keys[0]}" at ${where} is unexpected`;
    default:
      return `Invalid ${where}`;
  }
}
