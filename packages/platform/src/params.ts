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
      values[name] = decode(name, spec, raw.path[name]);
      continue;
    }
    const present = [name, ...spec.aliases].filter((n) => n in raw.body || n in raw.query);
    if (present.length > 1) {
      throw new ApiError("REQUEST_CONFUSING_VAR", `Can't decide between '${present[0]}' and '${present[1]}' arguments`);
    }
    if (present.length === 0) {
      if (spec.isRequired && spec.defaultValue === undefined) throw missingParam(name);
      values[name] = spec.defaultValue;
      continue;
    }
    const used = present[0];
    consumed.add(used);
    const value = lastValue(used in raw.body ? raw.body[used] : raw.query[used]);
    values[name] = decode(name, spec, value);
  }
  const sent = new Set([...Object.keys(raw.body), ...Object.keys(raw.query)]);
  const ignored = [...sent].filter((n) => !consumed.has(n)).sort();
  return { values: values as ParsedParams<S>, ignored };
}

function decode(name: string, spec: ParamSpec, value: unknown): unknown {
  if (typeof value !== "string") {
    // A multipart file part or a nested query object where a field was expected.
    throw badRequest(`Invalid ${name}`);
  }
  let decoded: unknown = value;
  if (spec.kind !== "string") {
    try {
      decoded = JSON.parse(value);
    } catch {
      throw badRequest(notA(name, spec.kind));
    }
    if (decoded === null) {
      if (spec.isNullable) return null;
      throw badRequest(notA(name, spec.kind));
    }
    if (spec.kind === "int" && !(typeof decoded === "number" && Number.isSafeInteger(decoded))) {
      throw badRequest(`${name} is not an integer`);
    }
    if (spec.kind === "bool" && typeof decoded !== "boolean") throw badRequest(`${name} is not a boolean`);
  }
  if (spec.kind === "string" && value.includes("\u0000")) {
    throw badRequest(`${name} must not contain null bytes`);
  }
  const result = spec.schema.safeParse(decoded);
  if (!result.success) throw badRequest(describeIssue(name, result.error.issues[0]));
  return result.data;
}

function notA(name: string, kind: ParamSpec["kind"]): string {
  if (kind === "int") return `${name} is not an integer`;
  if (kind === "bool") return `${name} is not a boolean`;
  return `${name} is not valid JSON`;
}

/** Renders `drafts[0]["type"]` the way Zulip names nested positions. */
export function renderPath(name: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, key) => (typeof key === "number" ? `${acc}[${key}]` : `${acc}["${String(key)}"]`), name);
}

const TYPE_NAMES: Record<string, string> = {
  array: "a list",
  object: "a dict",
  record: "a dict",
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
};

function describeIssue(name: string, issue: z.core.$ZodIssue | undefined): string {
  if (!issue) return `Invalid ${name}`;
  const where = renderPath(name, issue.path);
  switch (issue.code) {
    case "custom":
      return issue.message.includes("{name}") ? issue.message.replace("{name}", where) : issue.message;
    case "invalid_type": {
      if (issue.input === undefined && issue.path.length > 0) return `${where} key is missing from ${renderPath(name, issue.path.slice(0, -1))}`;
      const expected = issue.expected === "number" && "format" in issue ? "int" : issue.expected;
      return `${where} is not ${TYPE_NAMES[expected] ?? `a ${expected}`}`;
    }
    case "too_big":
      if (issue.origin === "string") return `${where} is too long (limit: ${issue.maximum} characters)`;
      if (issue.origin === "array") return `${where} has too many items (limit: ${issue.maximum})`;
      return `${where} is too large`;
    case "too_small":
      if (issue.origin === "string" && Number(issue.minimum) <= 1) return `${where} cannot be blank`;
      if (issue.origin === "string") return `${where} is too short`;
      if (issue.origin === "array") return `${where} is too short`;
      return `${where} is too small`;
    case "unrecognized_keys":
      return `Argument "${issue.keys[0]}" at ${where} is unexpected`;
    default:
      return `Invalid ${where}`;
  }
}
