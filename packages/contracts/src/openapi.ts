import { z } from "zod";
import type { ParamSpec } from "./params";
import type { RouteDef } from "./route";
import { publicRoutes } from "./routes/index";
import { ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from "./version";

/**
 * The public API as an OpenAPI 3.1 document, generated from the route table so it cannot drift:
 * parameters (query for GET, urlencoded form otherwise, JSON-encoded where Zulip encodes them),
 * the success body of each route inside the common envelope, the error envelope, and HTTP Basic
 * authentication. The gateway serves it at `GET /api/v1/openapi.json`.
 */

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const out = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** How a parameter travels: strings raw, everything else as JSON text (Zulip's convention). */
function paramSchema(spec: ParamSpec): JsonSchema {
  const plain = jsonSchema(spec.schema, "input");
  const value: JsonSchema = spec.isNullable ? { anyOf: [plain, { type: "null" }] } : plain;
  if (spec.kind === "string") return spec.defaultValue !== undefined ? { ...value, default: spec.defaultValue } : value;
  const encoded: JsonSchema = { type: "string", contentMediaType: "application/json", contentSchema: value };
  if (spec.defaultValue !== undefined) encoded.default = JSON.stringify(spec.defaultValue);
  return encoded;
}

const ENVELOPE = {
  result: { type: "string", enum: ["success"] },
  msg: { type: "string" },
  ignored_parameters_unsupported: { type: "array", items: { type: "string" }, description: "Names of parameters the endpoint ignored." },
};

const ERROR = {
  type: "object",
  required: ["result", "msg"],
  properties: { result: { type: "string", enum: ["error"] }, msg: { type: "string" }, code: { type: "string" } },
  additionalProperties: true,
};

/** The success body: the route's own fields inside `{result, msg}`. */
function successSchema(def: RouteDef): JsonSchema {
  const own = jsonSchema(def.response, "output");
  if (own.type !== "object" || !own.properties) {
    return { allOf: [{ type: "object", properties: ENVELOPE, required: ["result", "msg"] }, own] };
  }
  const properties = { ...ENVELOPE, ...((own.properties as JsonSchema | undefined) ?? {}) };
  const required = ["result", "msg", ...((own.required as string[] | undefined) ?? [])];
  return { ...own, type: "object", properties, required, additionalProperties: own.additionalProperties ?? false };
}

function operation(def: RouteDef): JsonSchema {
  const parameters: JsonSchema[] = [];
  const form: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, spec] of Object.entries(def.params)) {
    const schema = paramSchema(spec);
    const aliases = spec.aliases.length ? ` Also accepted as ${spec.aliases.map((a) => `\`${a}\``).join(", ")}.` : "";
    if (spec.inPath) parameters.push({ name, in: "path", required: true, schema });
    else if (def.method === "GET" || def.incomingWebhook) {
      parameters.push({ name, in: "query", required: spec.isRequired && spec.defaultValue === undefined, schema, ...(aliases ? { description: aliases.trim() } : {}) });
    } else {
      form[name] = aliases ? { ...schema, description: aliases.trim() } : schema;
      if (spec.isRequired && spec.defaultValue === undefined) required.push(name);
    }
  }
  const op: JsonSchema = {
    operationId: `${def.method.toLowerCase()}${def.path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? "").toUpperCase())}`,
    tags: [def.service],
    ...(def.summary ? { summary: def.summary } : {}),
    parameters,
    responses: {
      "200": { description: "Success", content: { "application/json": { schema: successSchema(def) } } },
      "400": { description: "Bad request", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
      ...(def.auth === "user" ? { "401": { description: "Not authenticated", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } } } : {}),
      ...(def.path.includes("{") ? { "404": { description: "No such object (or not accessible)", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } } } : {}),
      "429": { description: "Rate limit hit", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
      "503": { description: "A service is temporarily unavailable", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
    },
    security: def.incomingWebhook ? [{ basicAuth: [] }, { apiKey: [] }] : def.auth === "user" ? [{ basicAuth: [] }] : [],
  };
  if (def.incomingWebhook) {
    op.requestBody = { required: true, content: { "application/json": { schema: { description: "The third-party tool's own payload" } } } };
  } else if (def.method !== "GET" && !def.upload) {
    op.requestBody = {
      required: required.length > 0,
      content: { "application/x-www-form-urlencoded": { schema: { type: "object", properties: form, required } } },
    };
  }
  if (def.upload) {
    op.requestBody = {
      required: true,
      content: { "multipart/form-data": { schema: { type: "object", properties: { file: { type: "string", format: "binary" } }, required: ["file"] } } },
    };
  }
  if (def.longPoll) op.description = "Long poll: the response may take up to 90 s.";
  return op;
}

export function buildOpenApi(routes: readonly RouteDef[] = publicRoutes.filter((r) => !r.page)): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const def of [...routes].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))) {
    (paths[def.path] ??= {})[def.method.toLowerCase()] = operation(def);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Team Chat API",
      version: ZULIP_VERSION,
      description: `Zulip-compatible REST API (feature level ${ZULIP_FEATURE_LEVEL}). Parameters of GET requests go in the query string, others as an urlencoded form; list, object, integer and boolean parameters are JSON-encoded.`,
    },
    servers: [{ url: "/api/v1" }],
    components: {
      securitySchemes: {
        basicAuth: { type: "http", scheme: "basic", description: "email (or bot email) and API key" },
        apiKey: { type: "apiKey", in: "query", name: "api_key", description: "an API key, usually a bot's (integration URLs only)" },
      },
      schemas: { Error: ERROR },
    },
    paths,
  };
}
