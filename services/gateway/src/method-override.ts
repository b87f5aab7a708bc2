import type { FastifyRequest } from "fastify";
import { ApiError } from "@chat/platform";
import { readBody } from "./body";

/**
 * Zulip's method override: a POST whose form carries a `method` field is served as that method
 * (`POST /users/me/android_gcm_reg_id` with `method=DELETE` removes the token). The gateway
 * reads such a POST's form only where the path serves another method too, so uploads and every
 * POST-only route still stream through.
 */

export interface Override {
  method: string;
  /** Path and query for the owning service: for GET and HEAD the form's fields join the query. */
  path: string;
  /** The form without `method`, urlencoded; absent for GET and HEAD. */
  body?: Buffer;
}

export type FormRead = { kind: "override"; override: Override } | { kind: "plain"; body: Buffer };

const URLENCODED = "application/x-www-form-urlencoded";
const MULTIPART = "multipart/form-data";

export function isFormPost(req: FastifyRequest): boolean {
  if (req.method !== "POST") return false;
  const type = String(req.headers["content-type"] ?? "").toLowerCase();
  return type.startsWith(URLENCODED) || type.startsWith(MULTIPART);
}

/** Reads the form of a POST and looks for `method`; `path` is the upstream path and query. */
export async function readFormPost(req: FastifyRequest, path: string, maxBytes: number): Promise<FormRead> {
  const raw = await readBody(req, maxBytes);
  const type = String(req.headers["content-type"]);
  const multipart = type.toLowerCase().startsWith(MULTIPART);
  // Most POSTs have no such field: a byte search spares them the parse.
  const text = raw.toString("latin1");
  if (multipart ? !/name="?method"?/i.test(text) : !/(?:^|&)method=/.test(text)) return { kind: "plain", body: raw };
  const fields = await formFields(raw, type, multipart);
  const methods = fields.getAll("method");
  if (methods.length === 0) return { kind: "plain", body: raw };
  fields.delete("method");
  // Django keeps the last of repeated fields, as for every other parameter.
  const method = methods[methods.length - 1].toUpperCase();
  if (method === "GET" || method === "HEAD") {
    const query = fields.toString();
    const joined = query === "" ? path : `${path}${path.includes("?") ? "&" : "?"}${query}`;
    return { kind: "override", override: { method, path: joined } };
  }
  return { kind: "override", override: { method, path, body: Buffer.from(fields.toString(), "utf8") } };
}

async function formFields(raw: Buffer, type: string, multipart: boolean): Promise<URLSearchParams> {
  if (!multipart) return new URLSearchParams(raw.toString("utf8"));
  let form: FormData;
  try {
    form = await new Response(raw as unknown as BodyInit, { headers: { "content-type": type } }).formData();
  } catch {
    throw new ApiError("BAD_REQUEST", "Malformed multipart body");
  }
  const fields = new URLSearchParams();
  // Files have no place in another method's parameters.
  for (const [name, value] of form.entries()) if (typeof value === "string") fields.append(name, value);
  return fields;
}
