import { Agent, request } from "undici";
import { ApiError, serviceUnavailable } from "./errors";
import { INTERNAL_HEADERS, identityHeaders, type Identity } from "./identity";
import { currentRequestId } from "./request-context";

export interface CallOptions {
  identity?: Identity | null;
  /** Parameters, encoded the Zulip way: strings raw, everything else as JSON text. */
  params?: Record<string, unknown>;
  /** Defaults to the id of the request being handled, so one id follows a request across services. */
  requestId?: string;
  timeoutMs?: number;
}

export function encodeParams(params: Record<string, unknown>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    form.append(k, typeof v === "string" ? v : JSON.stringify(v));
  }
  return form;
}

/**
 * Kept-alive connections shared by every internal client of the process (undici's own pool:
 * about a third of the CPU of the global fetch per call, which mattered on every send and
 * register; see bench/README.md).
 */
const agent = new Agent({ keepAliveTimeout: 4_000 });

/**
 * Calls another service's route over HTTP with the internal token (and the caller's identity
 * when acting for a user). Error envelopes become ApiErrors; an unreachable service becomes 503.
 */
export class InternalClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async call<T = Record<string, unknown>>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
    const headers: Record<string, string> = opts.identity
      ? identityHeaders(opts.identity, this.token)
      : { [INTERNAL_HEADERS.token]: this.token };
    const requestId = opts.requestId ?? currentRequestId();
    if (requestId) headers[INTERNAL_HEADERS.requestId] = requestId;
    const form = encodeParams(opts.params ?? {});
    let url = `${this.baseUrl}/api/v1${path}`;
    let body: string | undefined;
    if (method === "GET") {
      const qs = form.toString();
      if (qs) url += `?${qs}`;
    } else {
      body = form.toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const timeout = opts.timeoutMs ?? 10_000;
    let status: number;
    let data: Record<string, unknown> | null;
    try {
      const res = await request(url, { method: method as "GET", headers, body, dispatcher: agent, headersTimeout: timeout, bodyTimeout: timeout });
      status = res.statusCode;
      data = (await res.body.json().catch(() => null)) as Record<string, unknown> | null;
    } catch {
      throw serviceUnavailable();
    }
    if (!data) throw serviceUnavailable();
    if (data.result !== "success") {
      const { result: _r, msg, code, ...extra } = data;
      if (status >= 500) throw serviceUnavailable();
      throw new ApiError((code as never) ?? null, String(msg ?? "Error"), { status, extra });
    }
    return data as T;
  }
}
