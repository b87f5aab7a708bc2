import type { FastifyInstance } from "fastify";
import { encodeParams, identityHeaders, INTERNAL_HEADERS, type Identity } from "@chat/platform";

export interface TestResponse {
  status: number;
  body: any;
  headers: Record<string, string | string[] | number | undefined>;
}

/**
 * Calls a service app in-process the way the gateway would: internal token, identity headers,
 * Zulip-encoded parameters (form body for non-GET, query string for GET).
 */
export function serviceClient(app: FastifyInstance, token: string) {
  return serviceCaller(token, async (method, url, headers, payload) => {
    const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
    return { status: res.statusCode, body: parseBody(res.body), headers: res.headers };
  });
}

/**
 * The same calls over HTTP to a listening service (`baseUrl`): requests then reach what the
 * service's server runs ahead of fastify (the events service's held polls), as in production.
 */
export function httpServiceClient(baseUrl: string, token: string) {
  return serviceCaller(token, async (method, url, headers, payload) => {
    const res = await fetch(baseUrl + url, { method, headers, body: payload });
    return { status: res.status, body: parseBody(await res.text()), headers: Object.fromEntries(res.headers) };
  });
}

type Send = (method: string, url: string, headers: Record<string, string>, payload: string | undefined) => Promise<TestResponse>;

function serviceCaller(token: string, send: Send) {
  return async function call(
    method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
    path: string,
    opts: { as?: Identity | null; params?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ): Promise<TestResponse> {
    const headers: Record<string, string> = opts.as ? identityHeaders(opts.as, token) : { [INTERNAL_HEADERS.token]: token };
    Object.assign(headers, opts.headers ?? {});
    const form = encodeParams(opts.params ?? {}).toString();
    const url = `/api/v1${path}`;
    return method === "GET"
      ? send(method, form ? `${url}?${form}` : url, headers, undefined)
      : send(method, url, { ...headers, "content-type": "application/x-www-form-urlencoded" }, form);
  };
}

/** JSON when it is JSON (every API answer), the raw text otherwise (/metrics, a proxy's error page). */
function parseBody(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export const basicAuth = (email: string, apiKey: string) =>
  "Basic " + Buffer.from(`${email}:${apiKey}`).toString("base64");
