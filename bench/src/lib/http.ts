import { Pool } from "undici";

/**
 * The load generator's HTTP client: one undici Pool per target and purpose, a bounded number of
 * sockets, Zulip encoding (query for GET, urlencoded form otherwise, non-strings as JSON). It
 * stays lean on purpose: the services share our two cores with it.
 */

export interface Reply<T = any> {
  status: number;
  body: T;
  /** Milliseconds from the request start to the end of the body. */
  ms: number;
}

export type Params = Record<string, unknown>;

export function encode(params: Params): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    form.append(k, typeof v === "string" ? v : JSON.stringify(v));
  }
  return form.toString();
}

export const basicAuth = (email: string, apiKey: string) => "Basic " + Buffer.from(`${email}:${apiKey}`).toString("base64");

export interface PoolOptions {
  /** Sockets this pool may open (long polls hold one each). */
  connections: number;
  /** Longest wait for headers and body (long polls need more than the heartbeat). */
  timeoutMs?: number;
}

export function createPool(origin: string, opts: PoolOptions): Pool {
  return new Pool(origin, {
    connections: opts.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: opts.timeoutMs ?? 120_000,
    bodyTimeout: opts.timeoutMs ?? 120_000,
  });
}

/**
 * A caller bound to one pool and one set of headers (Basic auth through the gateway, or the
 * internal token plus identity headers when talking to a service directly).
 */
export class Caller {
  constructor(
    readonly pool: Pool,
    private readonly headers: Record<string, string>,
    /** Prefix of every path, `/api/v1` for both the gateway and the services. */
    private readonly prefix = "/api/v1",
  ) {}

  async call<T = any>(method: string, path: string, params: Params = {}, signal?: AbortSignal): Promise<Reply<T>> {
    const res = await this.send(method, path, params, {}, signal);
    const text = await res.body.text();
    const ms = performance.now() - res.start;
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* keep the text: the caller reports it */
    }
    return { status: res.statusCode, body: parsed as T, ms };
  }

  /** The answer's bytes as sent (not decoded), with more request headers (say `accept-encoding`). */
  async raw(method: string, path: string, params: Params, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; bytes: Buffer; ms: number }> {
    const res = await this.send(method, path, params, headers);
    const bytes = Buffer.from(await res.body.arrayBuffer());
    return { status: res.statusCode, headers: res.headers, bytes, ms: performance.now() - res.start };
  }

  /** The request, form-encoded (in the query for GET); `start` is when it was sent. */
  private async send(method: string, path: string, params: Params, extra: Record<string, string>, signal?: AbortSignal) {
    const form = encode(params);
    let url = this.prefix + path;
    let body: string | undefined;
    const headers: Record<string, string> = { ...this.headers, ...extra };
    if (method === "GET") {
      if (form) url += `?${form}`;
    } else {
      body = form;
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const start = performance.now();
    // reset: false: keep the connection after a DELETE with a body, as clients such as
    // python-zulip-api do (undici would close it and reconnect for the next request).
    const res = await this.pool.request({ method: method as "GET", path: url, headers, body, signal, reset: false });
    return Object.assign(res, { start });
  }

  get<T = any>(path: string, params?: Params, signal?: AbortSignal) {
    return this.call<T>("GET", path, params, signal);
  }
  post<T = any>(path: string, params?: Params, signal?: AbortSignal) {
    return this.call<T>("POST", path, params, signal);
  }
  delete<T = any>(path: string, params?: Params, signal?: AbortSignal) {
    return this.call<T>("DELETE", path, params, signal);
  }
}

/** Throws with the body when a setup call did not succeed: setup failures are bugs to show. */
export function expectOk<T>(reply: Reply<T>, what: string): T {
  const body = reply.body as any;
  if (reply.status !== 200 || body?.result !== "success") {
    throw new Error(`${what} failed: HTTP ${reply.status} ${typeof body === "string" ? body.slice(0, 300) : JSON.stringify(body).slice(0, 300)}`);
  }
  return body as T;
}
