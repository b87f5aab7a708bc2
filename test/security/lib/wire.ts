import type { RouteDef } from "@chat/contracts";
import { encodeFields, type FuzzRequest } from "./inputs";

export interface WireResponse {
  status: number;
  contentType: string;
  text: string;
  /** Parsed JSON, or undefined when the body is not JSON. */
  json: any;
  ms: number;
}

/** Sends a generated request as raw HTTP (no client-side re-encoding), HTTP Basic if `auth`. */
export async function sendRaw(baseUrl: string, req: FuzzRequest, auth: string | null, timeoutMs = 20_000): Promise<WireResponse> {
  let url = `${baseUrl}/api/v1${req.path}`;
  const headers: Record<string, string> = auth ? { authorization: auth } : {};
  const form = encodeFields(req.fields);
  let body: string | undefined;
  if (req.method === "GET") {
    if (form) url += `?${form}`;
  } else if (req.body) {
    body = req.body.data;
    headers["content-type"] = req.body.contentType;
  } else {
    body = form;
    headers["content-type"] = "application/x-www-form-urlencoded";
  }
  const t0 = Date.now();
  const res = await fetch(url, { method: req.method, headers, body, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", text, json, ms: Date.now() - t0 };
}

/** Routes whose success is a file or a redirect, not JSON. */
const BINARY_SUCCESS = new Set(["/user_uploads/{realm_id_str}/{dir}/{random}/{filename}", "/user_avatars/{realm_id_str}/{filename}"]);

/**
 * What a client may rely on for any input: no 5xx, a JSON body, and the Zulip envelope (success
 * with an empty msg, or error with a msg and a code). Returns the problem, or null.
 */
export function envelopeProblem(route: RouteDef, res: WireResponse): string | null {
  if (res.status >= 500) return `HTTP ${res.status}: ${res.text.slice(0, 300)}`;
  if (BINARY_SUCCESS.has(route.path) && res.status < 400) return null;
  // A web page answers HTML, refusals included (a form shown again with the reason); a request
  // its parameters cannot even describe still gets the JSON envelope.
  if (route.page && res.contentType.startsWith("text/html")) return null;
  if (!res.contentType.includes("application/json")) return `non-JSON answer (${res.status}, ${res.contentType}): ${res.text.slice(0, 200)}`;
  const b = res.json;
  if (b === undefined || typeof b !== "object" || b === null) return `body is not a JSON object: ${res.text.slice(0, 200)}`;
  if (b.result === "success") {
    if (res.status !== 200) return `success with HTTP ${res.status}`;
    if (b.msg !== "") return `success with msg ${JSON.stringify(b.msg)}`;
    return null;
  }
  if (b.result !== "error") return `result is ${JSON.stringify(b.result)}`;
  if (typeof b.msg !== "string" || b.msg === "") return `error without msg: ${res.text.slice(0, 200)}`;
  if (typeof b.code !== "string") return `error without code: ${res.text.slice(0, 200)}`;
  if (res.status < 400) return `error with HTTP ${res.status}`;
  return null;
}

export const isRefused = (res: WireResponse) => res.status >= 400 || res.json?.result === "error";
