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
  /**
   * The call only reads (a POST for the size of its parameters, say): like a GET, it is sent
   * again when its connection breaks before the answer (see CONNECTION_ATTEMPTS).
   */
  readOnly?: boolean;
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
 * Tries of a call whose connection fails before an answer, where sending it again is safe: any
 * call that never reached the peer (connection refused), and a read (GET, HEAD, `readOnly`)
 * whose connection broke. Behind a Kubernetes Service, a replica that has just died takes new
 * connections until its endpoint is removed, and every kept-alive connection to it breaks; the
 * next try goes to another replica (or the same one once it is back). Timeouts are not tried
 * again: the peer may still be working on it.
 */
const CONNECTION_ATTEMPTS = 3;
/** Errors of a connection that broke before the answer was read. */
const CONNECTION_LOST = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

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
    const { status, text } = await this.send(method, path, opts);
    return checked(status, text) as T;
  }

  /**
   * A call whose success body is wanted as the service sent it (JSON text), for passing on
   * without parsing it; failures become the same errors as `call`'s.
   */
  async callText(method: string, path: string, opts: CallOptions = {}): Promise<string> {
    const { status, text } = await this.send(method, path, opts);
    if (status === 200 && text.startsWith(SUCCESS_PREFIX)) return text;
    checked(status, text);
    return text;
  }

  private async send(method: string, path: string, opts: CallOptions): Promise<{ status: number; text: string }> {
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
    const readOnly = opts.readOnly ?? (method === "GET" || method === "HEAD");
    for (let attempt = 1; ; attempt++) {
      try {
        // reset: false keeps the connection after a DELETE with a body (see the gateway's proxy).
        const res = await request(url, { method: method as "GET", headers, body, reset: false, dispatcher: agent, headersTimeout: timeout, bodyTimeout: timeout });
        return { status: res.statusCode, text: await res.body.text() };
      } catch (err) {
        const code = (err as { code?: string }).code ?? "";
        const again = code === "ECONNREFUSED" || (readOnly && CONNECTION_LOST.has(code));
        if (!again || attempt >= CONNECTION_ATTEMPTS) throw serviceUnavailable();
      }
    }
  }
}

/** How every success body of our services begins (registerRoute's envelope, serialized in order). */
export const SUCCESS_PREFIX = '{"result":"success","msg":""';

/** The parsed success body; error envelopes become ApiErrors, anything unreadable a 503. */
function checked(status: number, text: string): Record<string, unknown> {
  let data: Record<string, unknown> | null = null;
  try {
    data = JSON.parse(text) as Record<string, unknown> | null;
  } catch {
    data = null;
  }
  if (!data || typeof data !== "object") throw serviceUnavailable();
  if (data.result !== "success") {
    const { result: _r, msg, code, ...extra } = data;
    if (status >= 500) throw serviceUnavailable();
    throw new ApiError((code as never) ?? null, String(msg ?? "Error"), { status, extra });
  }
  return data;
}
