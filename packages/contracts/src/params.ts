import { z } from "zod";

/**
 * How one request parameter travels on the wire, Zulip style: plain strings are taken raw,
 * every other type is JSON text (`true`, `5`, `[1,2]`, `{"a":1}`) decoded strictly.
 */
export type ParamKind = "string" | "int" | "bool" | "json";

/** `T` is the validated value; `Out` is what a handler receives (undefined when optional). */
export interface ParamSpec<T = unknown, Out = T | undefined> {
  readonly kind: ParamKind;
  /** Validates the decoded value; a failure becomes Zulip's `Invalid x` style error. */
  readonly schema: z.ZodType<T>;
  readonly isRequired: boolean;
  readonly defaultValue?: T;
  /** Older names accepted for the same parameter (`subject` for `topic`). */
  readonly aliases: readonly string[];
  /** Taken from the URL path (`/users/{user_id}`) rather than the body or query. */
  readonly inPath: boolean;
  /** The value may be JSON `null` (for example `invite_expires_in_minutes`). */
  readonly isNullable: boolean;
  /**
   * What a JSON object key `__proto__` anywhere in the value is refused with, where the route's
   * own wording names it better than the general one (an unknown name in a dict of names). Such a
   * key is always refused: the parsed value would leave it out, so no check could see it.
   */
  readonly protoKeyError?: string;
  /** Type-level only. */
  readonly __out?: Out;
  required(): ParamSpec<T, T>;
  default(value: T): ParamSpec<T, T>;
  nullable(): ParamSpec<T | null, Out | null>;
  alias(...names: string[]): ParamSpec<T, Out>;
  path(): ParamSpec<T, T>;
  withProtoKeyError(message: string): ParamSpec<T, Out>;
}

type Fields = Pick<ParamSpec, "kind" | "schema" | "isRequired" | "defaultValue" | "aliases" | "inPath" | "isNullable" | "protoKeyError">;

function make<T, Out>(f: Fields): ParamSpec<T, Out> {
  return {
    ...(f as Omit<Fields, "schema" | "defaultValue"> & { schema: z.ZodType<T>; defaultValue?: T }),
    required: () => make<T, T>({ ...f, isRequired: true }),
    default: (value: T) => make<T, T>({ ...f, defaultValue: value }),
    nullable: () => make<T | null, Out | null>({ ...f, isNullable: true }),
    alias: (...names: string[]) => make<T, Out>({ ...f, aliases: [...f.aliases, ...names] }),
    path: () => make<T, T>({ ...f, inPath: true, isRequired: true }),
    withProtoKeyError: (message: string) => make<T, Out>({ ...f, protoKeyError: message }),
  };
}

function base<T>(kind: ParamKind, schema: z.ZodType<T>): ParamSpec<T> {
  return make<T, T | undefined>({ kind, schema, isRequired: false, aliases: [], inPath: false, isNullable: false });
}

/** Parameter builders: `p.int().required()`, `p.bool().default(false)`, `p.json(schema)`. */
export const p = {
  str: (schema: z.ZodType<string> = z.string()) => base("string", schema),
  int: (schema: z.ZodType<number> = z.number().int()) => base("int", schema),
  bool: () => base("bool", z.boolean()),
  json: <T>(schema: z.ZodType<T>) => base("json", schema),
};

export type ParamSpecs = Record<string, ParamSpec<any, any>>;

/** The object a handler receives for a parameter spec map. */
export type ParsedParams<S extends ParamSpecs> = {
  [K in keyof S]: S[K] extends ParamSpec<any, infer Out> ? Out : never;
};

/**
 * Length in characters (code points), as Python's `len` counts them; `String#length` counts
 * UTF-16 units, two per emoji. Never more than `s.length`, so a short string costs nothing.
 */
function charLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Longer than `max` characters (code points). */
export const exceedsChars = (s: string, max: number): boolean => s.length > max && charLength(s) > max;

/**
 * A string of at most `max` characters counted as Zulip counts them (code points): an emoji is
 * one, where zod's `.max` counts two. Fails as `.max` would (too_big).
 */
export function maxChars(max: number) {
  return z.string().superRefine((value, ctx) => {
    if (exceedsChars(value, max)) ctx.addIssue({ code: "too_big", origin: "string", maximum: max, inclusive: true, input: value });
  });
}
