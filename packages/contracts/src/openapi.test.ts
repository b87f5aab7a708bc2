/**
 * Our contracts against Zulip's own OpenAPI description (`../shared/reference/zulip-openapi.yaml`
 * from the repository root). For every route of `allRoutes` whose method and path Zulip also
 * documents, parameter names, types and requiredness and success-response field names, types,
 * nullability and presence must agree. New routes are picked up automatically.
 *
 * Fields Zulip added after feature level 267 (the level we speak) are exempt; everything else
 * that differs on purpose is listed in DELIBERATE_DIFFERENCES with the reason.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { z as zz } from "zod";
import { p, type ParamSpec } from "./params";
import type { RouteDef } from "./route";
import { allRoutes } from "./routes/index";
import { ZULIP_FEATURE_LEVEL } from "./version";

/** `../shared/reference/zulip-openapi.yaml` from the repository root (ZULIP_OPENAPI_PATH overrides). */
const SPEC_PATH = process.env.ZULIP_OPENAPI_PATH ?? fileURLToPath(new URL("../../../../shared/reference/zulip-openapi.yaml", import.meta.url));
const exists = existsSync(SPEC_PATH);

/**
 * Where we differ from Zulip's YAML on purpose, keyed `"<METHOD> <path> <where>"` exactly as a
 * failure prints it. Only for what our spec (feature level 267) decides differently; each entry
 * says why. Anything else that differs is a bug in our contract.
 */
export const DELIBERATE_DIFFERENCES: Record<string, string> = {
  "POST /user_groups/create response.group_id: missing (required by Zulip)":
    "our spec 4.12: an empty success; `group_id` came to Zulip later (notes section 11, #7)",
  "POST /users/me/subscriptions param can_remove_subscribers_group: type integer, Zulip has integer|object":
    "our spec 2.5: an integer group id; Zulip took the object form at feature level 320",
  ...Object.fromEntries(
    ["new", "old"].map((key) => [
      `PATCH /streams/{stream_id} param can_remove_subscribers_group.${key}: type integer, Zulip has integer|object`,
      "our spec 2.5: a channel's can_remove_subscribers_group is a group id; anonymous groups (the object form) came at feature level 320",
    ]),
  ),
  "PATCH /settings response.account_email: not in Zulip's schema":
    "Zulip's json_change_settings answers it when an email change's link was mailed; its YAML leaves it out",
  "POST /register param queue_lifespan_secs: not among Zulip's parameters":
    "Zulip's register view accepts it though its YAML does not document it (notes section 5)",
  ...Object.fromEntries(
    ["GET /messages response.messages[]", "GET /messages/{message_id} response.message"].map((where) => [
      `${where}.edit_history[].prev_rendered_content_version: not in Zulip's schema`,
      "edit history entries carry it at feature level 267 (Zulip 9.0); Zulip removed it at feature level 284, after the YAML's level we speak",
    ]),
  ),
  ...Object.fromEntries(
    ["GET /messages response.messages[]", "GET /messages/{message_id} response.message"].map((where) => [
      `${where}.reactions[].user: not in Zulip's schema`,
      "reactions carry the legacy user object {id, email, full_name, is_mirror_dummy} at feature level 267 (Zulip 9.0); Zulip removed it at feature level 328, after the level we speak",
    ]),
  ),
  ...Object.fromEntries(
    ["event_types", "narrow", "all_public_streams", "client_capabilities", "apply_markdown", "client_gravatar", "slim_presence", "queue_lifespan_secs", "include_subscribers"].map((name) => [
      `GET /events param ${name}: not among Zulip's parameters`,
      "GET /events without queue_id and with dont_block=true registers a queue from register-style parameters, as Zulip's view does (notes section 6); its YAML leaves them out",
    ]),
  ),
};

type JsonType = "string" | "integer" | "number" | "boolean" | "array" | "object" | "null";

/** One schema, either side, reduced to what the comparison needs. */
interface Shape {
  /** Empty means "anything". */
  types: Set<JsonType>;
  nullable: boolean;
  props?: Map<string, Prop>;
  /** Objects with free-form keys (`additionalProperties: <schema>`, `z.record`). */
  dynamic?: Shape;
  items?: Shape;
}

interface Prop {
  shape: Shape;
  required: boolean;
  /** Added to Zulip after the feature level we speak. */
  newer: boolean;
}

const ANY = (): Shape => ({ types: new Set(), nullable: false });

// ---------------------------------------------------------------------------------------------
// Zulip's YAML

type Yaml = Record<string, any>;

function loadSpec(): Yaml {
  return parse(readFileSync(SPEC_PATH, "utf8"), { maxAliasCount: -1 }) as Yaml;
}

function resolve(doc: Yaml, node: Yaml | undefined): Yaml {
  let n = node ?? {};
  for (let i = 0; n && typeof n.$ref === "string" && i < 50; i++) {
    n = n.$ref
      .slice(2)
      .split("/")
      .reduce((acc: Yaml, key: string) => acc?.[key.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
  }
  return n ?? {};
}

/** The feature level a description says a field appeared at ("New in Zulip 9.0 (feature level 270)"). */
function introducedAt(node: Yaml): number | null {
  const text = String(node?.description ?? "");
  const m = /New in Zulip [^(]*\(feature level (\d+)\)/.exec(text);
  return m ? Number(m[1]) : null;
}

function isNewer(node: Yaml): boolean {
  const level = introducedAt(node);
  return level !== null && level > ZULIP_FEATURE_LEVEL;
}

/** `allOf` parts merged the way Zulip's YAML uses them: later `{}` entries only restate a field. */
function mergeAll(doc: Yaml, parts: Yaml[]): Yaml {
  const out: Yaml = { properties: {}, required: [] as string[] };
  for (const raw of parts) {
    const part = flatten(doc, raw);
    for (const [k, v] of Object.entries(part)) {
      if (k === "properties") {
        for (const [pk, pv] of Object.entries(v as Yaml)) {
          out.properties[pk] = { ...(out.properties[pk] ?? {}), ...resolve(doc, pv as Yaml) };
        }
      } else if (k === "required") {
        out.required.push(...(v as string[]));
      } else if (k !== "allOf") {
        out[k] = v;
      }
    }
  }
  return out;
}

function flatten(doc: Yaml, node: Yaml | undefined): Yaml {
  const n = resolve(doc, node);
  return n.allOf ? mergeAll(doc, [{ ...n, allOf: undefined }, ...n.allOf]) : n;
}

function yamlShape(doc: Yaml, node: Yaml | undefined, depth = 0): Shape {
  const n = flatten(doc, node);
  if (depth > 12) return ANY();
  const variants: Yaml[] = n.oneOf ?? n.anyOf;
  if (variants) {
    const shapes = variants.map((v) => yamlShape(doc, v, depth + 1));
    const merged = unionShapes(shapes);
    merged.nullable ||= n.nullable === true;
    return merged;
  }
  const shape: Shape = { types: new Set(), nullable: n.nullable === true };
  const type = n.type as string | undefined;
  if (type) shape.types.add(type as JsonType);
  else if (n.properties) shape.types.add("object");
  else if (n.items) shape.types.add("array");
  else if (Array.isArray(n.enum)) for (const v of n.enum) shape.types.add(jsonTypeOf(v));
  if (shape.types.has("array") || n.items) shape.items = yamlShape(doc, n.items, depth + 1);
  if (shape.types.has("object")) {
    const required = new Set<string>(n.required ?? []);
    if (n.properties) {
      shape.props = new Map();
      for (const [name, raw] of Object.entries(n.properties as Yaml)) {
        const prop = flatten(doc, raw as Yaml);
        shape.props.set(name, { shape: yamlShape(doc, prop, depth + 1), required: required.has(name), newer: isNewer(prop) });
      }
    }
    const extra = n.additionalProperties;
    if (extra && typeof extra === "object") shape.dynamic = yamlShape(doc, extra, depth + 1);
    else if (extra === true || (!n.properties && extra === undefined)) shape.dynamic = ANY();
  }
  return shape;
}

function jsonTypeOf(v: unknown): JsonType {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v as JsonType;
}

/** oneOf/union: a value may take any variant's form; a field is required only if every object variant requires it. */
function unionShapes(shapes: Shape[]): Shape {
  const out: Shape = { types: new Set(), nullable: shapes.some((s) => s.nullable) };
  if (shapes.some((s) => s.types.size === 0 && !s.nullable)) return { ...ANY(), nullable: out.nullable };
  for (const s of shapes) for (const t of s.types) out.types.add(t);
  const objects = shapes.filter((s) => s.types.has("object"));
  if (objects.some((s) => s.props)) {
    out.props = new Map();
    for (const s of objects) {
      for (const [k, p] of s.props ?? []) {
        const prev = out.props.get(k);
        out.props.set(k, prev ? { shape: unionShapes([prev.shape, p.shape]), required: prev.required && p.required, newer: prev.newer && p.newer } : { ...p });
      }
    }
    for (const [k, p] of out.props) if (!objects.every((s) => s.props?.has(k))) p.required = false;
    const dyn = objects.map((s) => s.dynamic).filter(Boolean) as Shape[];
    if (dyn.length) out.dynamic = unionShapes(dyn);
  } else if (objects.length) {
    out.dynamic = unionShapes(objects.map((s) => s.dynamic ?? ANY()));
  }
  const arrays = shapes.filter((s) => s.items);
  if (arrays.length) out.items = unionShapes(arrays.map((s) => s.items!));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Our zod schemas (zod 4 internals: `_zod.def.type` and friends)

type ZodLike = { _zod: { def: Record<string, any>; bag?: Record<string, unknown> } };

function zodShape(schema: unknown, depth = 0): Shape & { optional?: boolean } {
  const s = schema as ZodLike;
  const def = s?._zod?.def;
  if (!def || depth > 20) return ANY();
  switch (def.type) {
    case "optional":
      return { ...zodShape(def.innerType, depth + 1), optional: true };
    case "nullable": {
      const inner = zodShape(def.innerType, depth + 1);
      return { ...inner, nullable: true };
    }
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
    case "nonoptional":
      return zodShape(def.innerType, depth + 1);
    case "pipe":
      return zodShape(def.in, depth + 1);
    case "lazy":
      return zodShape(def.getter(), depth + 1);
    case "string":
    case "template_literal":
      return { types: new Set(["string"]), nullable: false };
    case "number": {
      const formats = [s._zod.bag?.format, def.format, ...(def.checks ?? []).map((c: ZodLike) => c._zod.def.format)];
      const isInt = formats.some((f) => typeof f === "string" && /int/.test(f));
      return { types: new Set([isInt ? "integer" : "number"]), nullable: false };
    }
    case "int":
    case "bigint":
      return { types: new Set(["integer"]), nullable: false };
    case "boolean":
      return { types: new Set(["boolean"]), nullable: false };
    case "null":
      return { types: new Set(), nullable: true };
    case "literal":
    case "enum": {
      const values: unknown[] = def.type === "literal" ? def.values : Object.values(def.entries);
      const types = new Set(values.filter((v) => v !== null).map(jsonTypeOf));
      return { types, nullable: values.includes(null) };
    }
    case "array":
      return { types: new Set(["array"]), nullable: false, items: zodShape(def.element, depth + 1) };
    case "tuple":
      return { types: new Set(["array"]), nullable: false, items: unionShapes((def.items as unknown[]).map((i) => zodShape(i, depth + 1))) };
    case "object": {
      const props = new Map<string, Prop>();
      for (const [k, v] of Object.entries(def.shape as Record<string, unknown>)) {
        const shape = zodShape(v, depth + 1);
        props.set(k, { shape, required: !shape.optional, newer: false });
      }
      const catchall = def.catchall?._zod?.def;
      const dynamic = catchall && catchall.type !== "never" ? zodShape(def.catchall, depth + 1) : undefined;
      return { types: new Set(["object"]), nullable: false, props, dynamic };
    }
    case "record":
    case "map":
      return { types: new Set(["object"]), nullable: false, dynamic: zodShape(def.valueType, depth + 1) };
    case "union":
      return unionShapes((def.options as unknown[]).map((o) => zodShape(o, depth + 1)));
    case "intersection": {
      const l = zodShape(def.left, depth + 1);
      const r = zodShape(def.right, depth + 1);
      if (!l.props && !r.props) return l.types.size ? l : r;
      const props = new Map([...(l.props ?? []), ...(r.props ?? [])]);
      return { types: new Set(["object"]), nullable: false, props, dynamic: l.dynamic ?? r.dynamic };
    }
    default:
      return ANY();
  }
}

function paramShape(spec: ParamSpec): Shape {
  let shape: Shape;
  if (spec.kind === "int") shape = { types: new Set(["integer"]), nullable: false };
  else if (spec.kind === "bool") shape = { types: new Set(["boolean"]), nullable: false };
  else shape = zodShape(spec.schema);
  return { ...shape, nullable: shape.nullable || spec.isNullable };
}

// ---------------------------------------------------------------------------------------------
// Comparison

const describeTypes = (s: Shape) => (s.types.size ? [...s.types].sort().join("|") : "any") + (s.nullable ? "|null" : "");

/** Whether `within` admits every value of type `t` (an integer is a number). */
const admits = (within: Set<JsonType>, t: JsonType) => within.has(t) || (t === "integer" && within.has("number"));

/**
 * A response may only use types Zulip documents for the field. A parameter must accept every
 * form Zulip clients send; a plain-string parameter takes the raw text of any of them and
 * parses it in the service, so it fits anything.
 */
function typesFit(ours: Shape, theirs: Shape, mode: "param" | "response"): boolean {
  if (ours.types.size === 0 || theirs.types.size === 0) return true;
  if (mode === "response") return [...ours.types].every((t) => admits(theirs.types, t));
  if (ours.types.has("string")) return true;
  return [...theirs.types].every((t) => admits(ours.types, t));
}

function compare(ours: Shape, theirs: Shape, where: string, mode: "param" | "response", problems: string[]): void {
  if (!typesFit(ours, theirs, mode)) {
    problems.push(`${where}: type ${describeTypes(ours)}, Zulip has ${describeTypes(theirs)}`);
    return;
  }
  if (mode === "response" && ours.nullable && !theirs.nullable && theirs.types.size > 0) {
    problems.push(`${where}: may be null here, never null in Zulip`);
  }
  if (ours.items && theirs.items) compare(ours.items, theirs.items, `${where}[]`, mode, problems);
  if (!ours.props || !(theirs.props || theirs.dynamic)) return;
  for (const [name, prop] of ours.props) {
    const at = `${where}.${name}`;
    const zulip = theirs.props?.get(name);
    if (zulip) {
      if (mode === "response" && !prop.required && zulip.required && !zulip.newer) problems.push(`${at}: optional here, always present in Zulip`);
      compare(prop.shape, zulip.shape, at, mode, problems);
    } else if (theirs.dynamic) {
      compare(prop.shape, theirs.dynamic, at, mode, problems);
    } else if (mode === "response") {
      // Inside a parameter, accepting more than Zulip documents is harmless; in a response
      // an undocumented field is drift.
      problems.push(`${at}: not in Zulip's schema`);
    }
  }
  for (const [name, zulip] of theirs.props ?? []) {
    if (zulip.required && !zulip.newer && !ours.props.has(name) && !ours.dynamic) problems.push(`${where}.${name}: missing (required by Zulip)`);
  }
}

interface ZulipOperation {
  params: Map<string, Prop>;
  response: Shape | null;
}

function operationFor(doc: Yaml, method: string, path: string): ZulipOperation | null {
  const norm = (p: string) => p.replace(/\{[^}]+\}/g, "{}");
  // `/users/{user_id}` and `/users/{email}` differ only by the placeholder name: exact first.
  const key = doc.paths[path] ? path : Object.keys(doc.paths).find((p) => norm(p) === norm(path));
  const op = key ? doc.paths[key][method.toLowerCase()] : undefined;
  if (!key || !op) return null;
  const params = new Map<string, Prop>();
  for (const raw of [...(doc.paths[key].parameters ?? []), ...(op.parameters ?? [])]) {
    const p = resolve(doc, raw);
    if (p.in !== "query" && p.in !== "path") continue;
    const schema = p.schema ?? p.content?.["application/json"]?.schema;
    params.set(p.name, { shape: yamlShape(doc, schema), required: p.required === true || p.in === "path", newer: isNewer(p) });
  }
  const body = resolve(doc, op.requestBody)?.content ?? {};
  const form = body["application/x-www-form-urlencoded"] ?? body["multipart/form-data"];
  if (form?.schema) {
    const s = flatten(doc, form.schema);
    const required = new Set<string>(s.required ?? []);
    for (const [name, raw] of Object.entries((s.properties ?? {}) as Yaml)) {
      const prop = flatten(doc, raw as Yaml);
      params.set(name, { shape: yamlShape(doc, prop), required: required.has(name), newer: isNewer(prop) });
    }
  }
  const ok = resolve(doc, op.responses?.["200"]);
  const schema = ok?.content?.["application/json"]?.schema;
  return { params, response: schema ? yamlShape(doc, schema) : null };
}

const ENVELOPE_FIELDS = ["result", "msg", "ignored_parameters_unsupported"];

/** Every difference between one of our routes and Zulip's description of it. */
function differences(doc: Yaml, route: RouteDef): { problems: string[]; unimplemented: string[] } | null {
  const op = operationFor(doc, route.method, route.path);
  if (!op) return null;
  const problems: string[] = [];
  const consumed = new Set<string>();
  for (const [name, spec] of Object.entries(route.params)) {
    const names = [name, ...spec.aliases];
    const known = names.find((n) => op.params.has(n));
    if (!known) {
      problems.push(`param ${name}: not among Zulip's parameters`);
      continue;
    }
    names.forEach((n) => consumed.add(n));
    const zulip = op.params.get(known)!;
    const required = spec.isRequired && spec.defaultValue === undefined;
    if (required && !zulip.required && !spec.inPath) problems.push(`param ${name}: required here, optional in Zulip`);
    compare(paramShape(spec), zulip.shape, `param ${name}`, "param", problems);
  }
  const unimplemented: string[] = [];
  for (const [name, zulip] of op.params) {
    if (consumed.has(name)) continue;
    if (zulip.required && !zulip.newer) problems.push(`param ${name}: missing (required by Zulip)`);
    else if (!zulip.newer) unimplemented.push(name);
  }
  if (op.response) {
    const ours = zodShape(route.response);
    const theirs: Shape = { ...op.response, props: new Map([...(op.response.props ?? [])].filter(([k]) => !ENVELOPE_FIELDS.includes(k))) };
    compare(ours, theirs, "response", "response", problems);
  }
  return { problems, unimplemented };
}

// ---------------------------------------------------------------------------------------------

const publicRoutes = allRoutes.filter((r) => r.auth !== "internal" && !r.path.startsWith("/internal/"));

if (!exists) {
  console.log(`[openapi contract] ${SPEC_PATH} not found: the comparison with Zulip's OpenAPI description was SKIPPED.`);
}

describe("contracts match Zulip's OpenAPI description", () => {
  const doc = exists ? loadSpec() : null;
  const documented = doc ? publicRoutes.filter((r) => operationFor(doc, r.method, r.path)) : [];

  it.skipIf(!exists)("finds the reference file and routes it documents", () => {
    expect(Object.keys(doc!.paths).length).toBeGreaterThan(50);
    expect(documented.length).toBeGreaterThan(0);
    const ours = publicRoutes.filter((r) => !documented.includes(r)).map((r) => `${r.method} ${r.path}`);
    if (ours.length) console.log(`[openapi contract] routes Zulip does not document (not compared): ${ours.join(", ")}`);
  });

  it.skipIf(!exists)("every documented difference is still real", () => {
    const all = new Set(documented.flatMap((r) => differences(doc!, r)!.problems.map((p) => `${r.method} ${r.path} ${p}`)));
    const stale = Object.keys(DELIBERATE_DIFFERENCES).filter((k) => !all.has(k));
    expect(stale, "entries in DELIBERATE_DIFFERENCES that no longer match a difference").toEqual([]);
  });

  for (const route of documented.length ? documented : [null]) {
    const title = route ? `${route.method} ${route.path}` : "routes (reference file absent)";
    it.skipIf(!exists)(title, () => {
      const result = differences(doc!, route!)!;
      const unexplained = result.problems.map((p) => `${title} ${p}`).filter((p) => !(p in DELIBERATE_DIFFERENCES));
      if (result.unimplemented.length && process.env.OPENAPI_VERBOSE) {
        console.log(`[openapi contract] ${title}: optional Zulip parameters not implemented (they are ignored and reported): ${result.unimplemented.join(", ")}`);
      }
      if (unexplained.length) {
        throw new Error(`${unexplained.length} difference(s) from Zulip's OpenAPI description (fix the contract, or list a deliberate one in DELIBERATE_DIFFERENCES):\n  ${unexplained.join("\n  ")}`);
      }
    });
  }
});

describe("the comparison itself", () => {
  // A small Zulip-style document, so the checker is shown to catch each kind of drift.
  const doc: Yaml = {
    paths: {
      "/things/{thing_id}": {
        patch: {
          parameters: [{ name: "thing_id", in: "path", required: true, schema: { type: "integer" } }],
          requestBody: {
            content: {
              "application/x-www-form-urlencoded": {
                schema: {
                  type: "object",
                  required: ["name"],
                  properties: {
                    name: { type: "string" },
                    tags: { type: "array", items: { type: "string" } },
                    flag: { type: "boolean" },
                    shiny: { type: "boolean", description: "**Changes**: New in Zulip 10.0 (feature level 300)." },
                  },
                },
              },
            },
          },
          responses: {
            "200": {
              content: {
                "application/json": {
                  schema: {
                    allOf: [
                      { $ref: "#/components/schemas/Base" },
                      {
                        additionalProperties: false,
                        required: ["thing"],
                        properties: {
                          result: {},
                          msg: {},
                          thing: { $ref: "#/components/schemas/Thing" },
                          later: { type: "integer", description: "New in Zulip 10.0 (feature level 301)." },
                        },
                      },
                    ],
                  },
                },
              },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        Base: { required: ["result", "msg"], properties: { result: { type: "string" }, msg: { type: "string" } } },
        Thing: {
          type: "object",
          additionalProperties: false,
          required: ["id", "avatar"],
          properties: { id: { type: "integer" }, avatar: { type: "string", nullable: true }, note: { type: "string" } },
        },
      },
    },
  };

  const base = (over: Partial<RouteDef> = {}): RouteDef => ({
    method: "PATCH",
    path: "/things/{thing_id}",
    service: "accounts",
    auth: "user",
    params: { thing_id: p.int().path(), name: p.str().required(), tags: p.json(zz.array(zz.string())), flag: p.bool() },
    response: zz.strictObject({ thing: zz.strictObject({ id: zz.number().int(), avatar: zz.string().nullable(), note: zz.string().optional() }) }),
    ...over,
  });

  it("accepts a faithful route, ignoring fields newer than our feature level", () => {
    expect(differences(doc, base())).toEqual({ problems: [], unimplemented: [] });
  });

  it("reports parameter drift", () => {
    const route = base({
      params: {
        thing_id: p.int().path(),
        title: p.str().required().alias("nom"),
        tags: p.json(zz.record(zz.string(), zz.string())),
        flag: p.bool().required(),
      },
    });
    expect(differences(doc, route)!).toEqual({
      problems: [
        "param title: not among Zulip's parameters",
        "param tags: type object, Zulip has array",
        "param flag: required here, optional in Zulip",
        "param name: missing (required by Zulip)",
      ],
      unimplemented: [],
    });
    // An alias that Zulip knows counts; a raw string parameter takes any JSON form.
    const aliased = base({ params: { thing_id: p.int().path(), title: p.str().required().alias("name"), tags: p.str(), flag: p.bool() } });
    expect(differences(doc, aliased)!.problems).toEqual([]);
    // A parameter must accept every form Zulip documents.
    const narrow = base({ params: { thing_id: p.int().path(), name: p.str().required(), flag: p.int() } });
    expect(differences(doc, narrow)!.problems).toEqual(["param flag: type integer, Zulip has boolean"]);
  });

  it("reports response drift", () => {
    const route = base({
      response: zz.strictObject({
        thing: zz.strictObject({ id: zz.string(), note: zz.string().nullable(), extra: zz.boolean() }),
      }),
    });
    expect(differences(doc, route)!.problems).toEqual([
      "response.thing.id: type string, Zulip has integer",
      "response.thing.note: may be null here, never null in Zulip",
      "response.thing.extra: not in Zulip's schema",
      "response.thing.avatar: missing (required by Zulip)",
    ]);
    const optional = base({ response: zz.strictObject({ thing: zz.strictObject({ id: zz.number().int(), avatar: zz.string().nullable() }).optional() }) });
    expect(differences(doc, optional)!.problems).toEqual(["response.thing: optional here, always present in Zulip"]);
  });

  it("ignores routes Zulip does not document", () => {
    expect(differences(doc, base({ path: "/elsewhere" }))).toBeNull();
  });
});
