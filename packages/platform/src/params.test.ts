import { describe, expect, it } from "vitest";
import { z } from "zod";
import { p, type ParamSpecs } from "@chat/contracts";
import { ApiError } from "./errors";
import { parseParams, renderPath, type RawParams } from "./params";

function parse(specs: ParamSpecs, raw: Partial<RawParams>) {
  return parseParams(specs, { body: {}, query: {}, path: {}, ...raw });
}

/** The Zulip error a parse raises: status, code, msg and extra fields. */
function failure(specs: ParamSpecs, raw: Partial<RawParams>): Record<string, any> {
  try {
    parse(specs, raw);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    return { status: e.status, ...e.body() };
  }
  throw new Error("expected the parse to fail");
}

describe("parseParams: where values come from", () => {
  const specs = { topic: p.str(), count: p.int() };

  it("reads the form body and the query string", () => {
    expect(parse(specs, { body: { topic: "a" }, query: { count: "3" } }).values).toEqual({ topic: "a", count: 3 });
  });

  it("prefers the body over the query string when both carry a parameter", () => {
    expect(parse(specs, { body: { topic: "body" }, query: { topic: "query" } }).values.topic).toBe("body");
  });

  it("takes the last of repeated values", () => {
    expect(parse(specs, { body: { topic: ["first", "last"] } }).values.topic).toBe("last");
  });

  it("does not mistake inherited object keys for sent parameters", () => {
    const r = parse({ constructor: p.str(), toString: p.str() }, { body: {} });
    expect(r.values).toEqual({ constructor: undefined, toString: undefined });
  });
});

describe("parseParams: typed values are strict JSON", () => {
  it("decodes integers, booleans, lists and objects", () => {
    const specs = { n: p.int(), b: p.bool(), l: p.json(z.array(z.number().int())), o: p.json(z.record(z.string(), z.number())) };
    const r = parse(specs, { query: { n: "-5", b: "true", l: "[1,2]", o: '{"a":1}' } });
    expect(r.values).toEqual({ n: -5, b: true, l: [1, 2], o: { a: 1 } });
  });

  it("takes plain strings raw, even when they look like JSON", () => {
    expect(parse({ s: p.str() }, { body: { s: '"quoted"' } }).values.s).toBe('"quoted"');
    expect(parse({ s: p.str() }, { body: { s: "null" } }).values.s).toBe("null");
  });

  it.each([
    ["1.5", "n is not an integer"],
    ['"5"', "n is not an integer"],
    ["true", "n is not an integer"],
    ["9007199254740993", "n is not an integer"],
    ["abc", "n is not valid JSON"],
    ["", "n is not valid JSON"],
  ])("int %j -> %s", (value, msg) => {
    expect(failure({ n: p.int() }, { body: { n: value } })).toEqual({ status: 400, result: "error", code: "BAD_REQUEST", msg });
  });

  it.each(["1e3", "1E3", "5.0", "-2.0", " 5.0 ", "1.0e1"])("int %j is a float, as Python's json reads it", (value) => {
    expect(failure({ n: p.int() }, { body: { n: value } })).toEqual({ status: 400, result: "error", code: "BAD_REQUEST", msg: "n is not an integer" });
  });

  it("refuses integers written as floats inside JSON, naming the position", () => {
    const ids = { members: p.json(z.array(z.number().int())) };
    expect(failure(ids, { body: { members: "[93.0]" } }).msg).toBe("members[0] is not an integer");
    expect(failure(ids, { body: { members: "[1, 93e0]" } }).msg).toBe("members[1] is not an integer");
    expect(failure(ids, { body: { members: "[4503599627370496.0]" } }).msg).toBe("members[0] is not an integer");
    const nested = { g: p.json(z.union([z.number().int(), z.strictObject({ direct_members: z.array(z.number().int()) })])) };
    expect(failure(nested, { body: { g: "2.0" } }).msg).toBe("g is not an integer");
    expect(failure(nested, { body: { g: '{"direct_members": [1, 2E0]}' } }).msg).toBe('g["direct_members"][1] is not an integer');
  });

  it("a schema that takes any number and refuses fractions in its own words refuses such an integer in them", () => {
    const own = { v: p.json(z.unknown().superRefine((v, ctx) => void (typeof v === "number" && !Number.isInteger(v) && ctx.addIssue({ code: "custom", message: "v is not a string or integer", input: v })))) };
    expect(failure(own, { body: { v: "1.5" } }).msg).toBe("v is not a string or integer");
    expect(failure(own, { body: { v: "5.0" } }).msg).toBe("v is not a string or integer");
    expect(parse(own, { body: { v: "5" } }).values.v).toBe(5);
    expect(parse(own, { body: { v: '"5.0"' } }).values.v).toBe("5.0");
  });

  it("keeps float syntax where the schema takes floats, and inside strings", () => {
    const specs = { o: p.json(z.strictObject({ f: z.number(), n: z.number().int(), s: z.string() })) };
    const r = parse(specs, { body: { o: '{"f": 2.0, "n": 3, "s": "1.0e5 \\" 7.0"}' } });
    expect(r.values.o).toEqual({ f: 2, n: 3, s: '1.0e5 " 7.0' });
    expect(parse({ l: p.json(z.array(z.number().int())) }, { body: { l: "[1, 20, -3]" } }).values.l).toEqual([1, 20, -3]);
  });

  it.each([
    ["1", "b is not a boolean"],
    ['"true"', "b is not a boolean"],
    ["True", "b is not valid JSON"],
  ])("bool %j -> %s", (value, msg) => {
    expect(failure({ b: p.bool() }, { body: { b: value } })).toMatchObject({ code: "BAD_REQUEST", msg });
  });

  it("names the expected container for lists and dicts", () => {
    expect(failure({ to: p.json(z.array(z.number().int())) }, { body: { to: "{}" } }).msg).toBe("to is not a list");
    expect(failure({ o: p.json(z.object({ a: z.number() })) }, { body: { o: "[]" } }).msg).toBe("o is not a dict");
    expect(failure({ l: p.json(z.array(z.number())) }, { body: { l: "[1," } }).msg).toBe("l is not valid JSON");
  });

  it("applies the route's schema with Zulip's wording", () => {
    expect(failure({ topic: p.str(z.string().max(5)) }, { body: { topic: "toolong" } }).msg).toBe("topic is too long (limit: 5 characters)");
    expect(failure({ name: p.str(z.string().min(1)) }, { body: { name: "" } }).msg).toBe("name cannot be blank");
    expect(failure({ n: p.int(z.number().int().min(0)) }, { body: { n: "-1" } }).msg).toBe("n is too small");
    expect(failure({ n: p.int(z.number().int().max(5)) }, { body: { n: "6" } }).msg).toBe("n is too large");
    expect(failure({ op: p.str(z.enum(["add", "remove"])) }, { body: { op: "toggle" } }).msg).toBe("Invalid op");
    expect(failure({ e: p.str(z.string().regex(/^a/)) }, { body: { e: "b" } }).msg).toBe("e has invalid format");
  });

  it("uses a custom refinement's message, with {name} filled in", () => {
    const spec = p.str(z.string().refine((s) => s.trim() !== "", "{name} must not be empty"));
    expect(failure({ content: spec }, { body: { content: "  " } }).msg).toBe("content must not be empty");
    const fixed = p.str(z.string().refine((s) => s !== "x", "Message must not be x"));
    expect(failure({ content: fixed }, { body: { content: "x" } }).msg).toBe("Message must not be x");
  });
});

describe("parseParams: nested error paths", () => {
  const Draft = z.strictObject({
    type: z.enum(["", "stream", "private"]),
    to: z.array(z.number().int()),
    topic: z.string(),
    timestamp: z.number().int().optional(),
  });
  const specs = { drafts: p.json(z.array(Draft)) };
  const send = (drafts: unknown) => failure(specs, { body: { drafts: JSON.stringify(drafts) } }).msg;

  it("renders list indexes and JSON-quoted keys", () => {
    expect(send([{ type: "bogus", to: [], topic: "" }])).toBe('Invalid drafts[0]["type"]');
    expect(send([{ type: "", to: [], topic: "" }, { type: "", to: ["x"], topic: "" }])).toBe('drafts[1]["to"][0] is not an integer');
    expect(send([{ type: "", to: [], topic: 5 }])).toBe('drafts[0]["topic"] is not a string');
    expect(send([{ type: "", to: [], topic: "", timestamp: 1.5 }])).toBe('drafts[0]["timestamp"] is not an integer');
  });

  it("reports a missing key and an unexpected one", () => {
    expect(send([{ to: [], topic: "" }])).toBe('drafts[0]["type"] field is missing');
    expect(send([{ type: "", to: [], topic: "", extra: 1 }])).toBe('Argument "extra" at drafts[0] is unexpected');
  });

  it("renderPath quotes keys the way JSON does", () => {
    expect(renderPath("x", [0, "a", 2, 'q"uote'])).toBe('x[0]["a"][2]["q\\"uote"]');
  });
});

describe("parseParams: required, defaults, nullable, aliases", () => {
  it("answers REQUEST_VARIABLE_MISSING with var_name for a missing required parameter", () => {
    expect(failure({ content: p.str().required() }, {})).toEqual({
      status: 400,
      result: "error",
      msg: "Missing 'content' argument",
      code: "REQUEST_VARIABLE_MISSING",
      var_name: "content",
    });
  });

  it("fills defaults, and gives each request its own copy of an object default", () => {
    const specs = { narrow: p.json(z.array(z.unknown())).default([]), apply: p.bool().default(true), opt: p.int() };
    const a = parse(specs, {}).values;
    expect(a).toEqual({ narrow: [], apply: true, opt: undefined });
    (a.narrow as unknown[]).push("mutated");
    expect(parse(specs, {}).values.narrow).toEqual([]);
  });

  it("accepts JSON null only where the parameter is nullable", () => {
    expect(parse({ e: p.int().nullable() }, { body: { e: "null" } }).values.e).toBeNull();
    expect(failure({ e: p.int() }, { body: { e: "null" } }).msg).toBe("e is not an integer");
    expect(failure({ e: p.bool() }, { body: { e: "null" } }).msg).toBe("e is not a boolean");
    // Zulip names the type a JSON parameter wants, where it is one.
    expect(failure({ e: p.json(z.array(z.string())) }, { body: { e: "null" } }).msg).toBe("e is not a list");
    expect(failure({ e: p.json(z.record(z.string(), z.boolean())) }, { body: { e: "null" } }).msg).toBe("e is not a dict");
    expect(failure({ e: p.json(z.object({ a: z.number() }).optional()) }, { body: { e: "null" } }).msg).toBe("e is not a dict");
    expect(failure({ e: p.json(z.union([z.number(), z.array(z.number())])) }, { body: { e: "null" } }).msg).toBe("e is not valid JSON");
  });

  it("refuses an object key __proto__ anywhere in a JSON parameter, which the parsed value would leave out", () => {
    const dict = p.json(z.record(z.string(), z.boolean()));
    expect(failure({ d: dict }, { body: { d: '{"__proto__": true}' } }).msg).toBe('Argument "__proto__" at d is unexpected');
    expect(failure({ d: dict }, { body: { d: '{"a": true, "\\u005f_proto__": true}' } }).msg).toBe('Argument "__proto__" at d is unexpected');
    const nested = p.json(z.array(z.object({ op: z.string() }).passthrough()));
    expect(failure({ n: nested }, { body: { n: '[{"op": "a"}, {"op": "b", "x": {"__proto__": 1}}]' } }).msg).toBe('Argument "__proto__" at n[1]["x"] is unexpected');
    // The route's own words, where it has them; its schema's refusal comes first.
    const named = dict.withProtoKeyError("Invalid thing: __proto__.");
    expect(failure({ d: named }, { body: { d: '{"__proto__": true}' } }).msg).toBe("Invalid thing: __proto__.");
    expect(failure({ d: named }, { body: { d: '{"__proto__": true, "b": 1}' } }).msg).toBe('d["b"] is not a boolean');
    // Anywhere else the text may say it.
    expect(parse({ d: dict }, { body: { d: '{"__proto__x": true, "\\u0041": false}' } }).values.d).toEqual({ __proto__x: true, A: false });
  });

  it("accepts an alias and reports the name it used as consumed", () => {
    const specs = { topic: p.str().alias("subject") };
    const r = parse(specs, { body: { subject: "old name" } });
    expect(r.values.topic).toBe("old name");
    expect(r.ignored).toEqual([]);
  });

  it("answers REQUEST_CONFUSING_VAR when two names of one parameter are sent", () => {
    const specs = { topic: p.str().alias("subject") };
    expect(failure(specs, { body: { topic: "a" }, query: { subject: "b" } })).toEqual({
      status: 400,
      result: "error",
      code: "REQUEST_CONFUSING_VAR",
      msg: "Can't decide between 'topic' and 'subject' arguments",
    });
  });

  it("a required parameter is satisfied by its alias", () => {
    expect(parse({ channel: p.str().required().alias("stream") }, { body: { stream: "x" } }).values.channel).toBe("x");
  });
});

describe("parseParams: path parameters", () => {
  it("decodes integer path segments", () => {
    const r = parse({ user_id: p.int().path() }, { path: { user_id: "42" } });
    expect(r.values.user_id).toBe(42);
  });

  it("answers 404 for a non-numeric id, as an unmatched URL", () => {
    for (const v of ["abc", "1.5", "-1", "1e3"]) {
      expect(failure({ user_id: p.int().path() }, { path: { user_id: v } })).toMatchObject({ status: 404, code: "BAD_REQUEST", msg: "Not Found" });
    }
  });

  it("takes string path segments raw and never looks at the body for them", () => {
    const r = parse({ email: p.str().path() }, { path: { email: "a@b.c" }, body: { email: "other" } });
    expect(r.values.email).toBe("a@b.c");
    // The repeated body copy is not consumed (zulip-js repeats path ids in the query).
    expect(r.ignored).toEqual(["email"]);
  });
});

describe("parseParams: ignored_parameters_unsupported", () => {
  const specs = { topic: p.str() };

  it("lists unknown names from body and query, sorted, once each", () => {
    const r = parse(specs, { body: { zeta: "1", topic: "x", alpha: "2" }, query: { mid: "3", alpha: "4" } });
    expect(r.ignored).toEqual(["alpha", "mid", "zeta"]);
  });

  it("is empty when everything was consumed", () => {
    expect(parse(specs, { body: { topic: "x" } }).ignored).toEqual([]);
  });

  it("never reports the universal `client` parameter", () => {
    expect(parse(specs, { body: { client: "website" }, query: { client: "x" } }).ignored).toEqual([]);
  });
});

describe("parseParams: null bytes", () => {
  it("refuses NUL in a string parameter", () => {
    expect(failure({ topic: p.str() }, { body: { topic: "a\u0000b" } })).toMatchObject({
      status: 400,
      code: "BAD_REQUEST",
      msg: "topic must not contain null bytes",
    });
  });

  it("refuses NUL anywhere inside a JSON parameter, naming the position", () => {
    const specs = { drafts: p.json(z.array(z.object({ content: z.string() }))) };
    expect(failure(specs, { body: { drafts: '[{"content":"ok"},{"content":"a\\u0000"}]' } }).msg).toBe(
      'drafts[1]["content"] must not contain null bytes',
    );
    expect(failure({ o: p.json(z.record(z.string(), z.number())) }, { body: { o: '{"a\\u0000":1}' } }).msg).toBe(
      'o["a\\u0000"] must not contain null bytes',
    );
  });

  it("walks JSON nested 10,000 deep (a 400 naming the spot, or the value)", () => {
    const specs = { data: p.json(z.record(z.string(), z.unknown())) };
    const deep = (inner: string) => '{"a":'.repeat(10_000) + inner + "}".repeat(10_000);
    expect(parse(specs, { body: { data: deep('"ok"') } }).values.data).toHaveProperty("a.a.a");
    const refused = failure(specs, { body: { data: deep('"\\u0000"') } });
    expect(refused).toMatchObject({ status: 400, code: "BAD_REQUEST" });
    expect(refused.msg).toBe(`data${'["a"]'.repeat(10_000)} must not contain null bytes`);
  });

  it("lets the route's own check word it first", () => {
    const content = p.str(z.string().refine((s) => !s.includes("\u0000"), "Message must not contain null bytes"));
    expect(failure({ content }, { body: { content: "\u0000" } }).msg).toBe("Message must not contain null bytes");
  });
});

describe("parseParams: multipart file parts", () => {
  it("answers Invalid x when a file arrives where a field was expected", () => {
    expect(failure({ topic: p.str() }, { body: { topic: { file: true } } }).msg).toBe("Invalid topic");
  });
});
