import type { IncomingHttpHeaders } from "node:http";
import { Transform } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Agent, request } from "undici";
import { ApiError, serviceUnavailable, type Logger } from "@chat/platform";
import { BUFFERED_RESPONSE_BYTES, H2Upstream, type UpstreamAnswer } from "./h2-upstream";

/** Headers that describe one connection, not the message: never forwarded either way. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "host",
]);

/** Client headers the services must never see: credentials and anything posing as internal. */
function dropFromClient(name: string): boolean {
  return HOP_BY_HOP.has(name) || name.startsWith("x-chat-") || name === "authorization" || name === "x-request-id";
}

/** Copies the client's headers minus hop-by-hop, credentials and `x-chat-*`, plus `extra`. */
export function upstreamHeaders(incoming: IncomingHttpHeaders, extra: Record<string, string>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || dropFromClient(name.toLowerCase())) continue;
    out[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) out[name.toLowerCase()] = value;
  return out;
}

export interface ForwardOptions {
  /** The owning service's base URL (`http://127.0.0.1:9993`). */
  baseUrl: string;
  /** The method to use upstream, when not the request's own (a method override). */
  method?: string;
  /** Path and query on the owning service. */
  path: string;
  headers: Record<string, string | string[]>;
  /** A body already read by the gateway; otherwise the request stream is piped through. */
  body?: Buffer;
  /** Headers added to the response (rate limits). */
  responseHeaders?: Record<string, string>;
  /** Sees the upstream status before the body streams (fetch_api_key clears its counter on success). */
  onStatus?: (status: number) => Promise<void>;
  /** A held request (GET /events): released at shutdown so the client re-polls elsewhere. */
  longPoll?: boolean;
  /**
   * Largest streamed body passed on. Past it the gateway answers 413 itself: the service would
   * refuse too, but its early answer reaches us only as a broken pipe.
   */
  maxBodyBytes?: number;
}

/**
 * Streams a request to its owning service and the answer back, chunk by chunk in both
 * directions (uploads and long polls pass without buffering). Connection failures become 503.
 */
export class UpstreamProxy {
  private readonly agent: Agent;
  private readonly heldPolls = new Set<AbortController>();
  /** Long polls' HTTP/2 connections, by upstream (see H2Upstream). */
  private readonly pollUpstreams = new Map<string, H2Upstream>();

  constructor(
    private readonly opts: {
      timeoutMs: number;
      connectTimeoutMs: number;
      /** HTTP/2 connections per upstream for long polls; 0 sends them over HTTP/1.1. */
      longPollConnections: number;
      /** How long one such connection takes new polls before it is replaced. */
      longPollConnectionMaxAgeMs: number;
    },
    private readonly log: Logger,
  ) {
    this.agent = new Agent({
      connect: { timeout: opts.connectTimeoutMs },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  async forward(req: FastifyRequest, reply: FastifyReply, opts: ForwardOptions): Promise<FastifyReply> {
    const method = (opts.method ?? req.method).toUpperCase();
    const hasBody = method !== "GET" && method !== "HEAD" && (opts.body !== undefined || requestHasBody(req));
    // Stop the upstream work (a held long poll) when the client goes away.
    const abort = new AbortController();
    reply.raw.on("close", () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    if (opts.longPoll) this.heldPolls.add(abort);
    const headers = { ...opts.headers };
    if (opts.body !== undefined) headers["content-length"] = String(opts.body.length);
    let answer: UpstreamAnswer | null = null;
    try {
      if (opts.longPoll && method === "GET" && this.opts.longPollConnections > 0 && mayBeHeld(opts.path)) {
        answer = await this.pollUpstream(opts.baseUrl).get(opts.path, headers, abort.signal);
      }
      answer ??= await this.viaHttp1(req, opts, method, headers, hasBody, abort.signal);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      const e = err as { code?: string; message?: string };
      req.log.warn({ err: e.message, code: e.code, upstream: opts.baseUrl }, "upstream unavailable");
      throw serviceUnavailable();
    } finally {
      this.heldPolls.delete(abort);
    }
    if (opts.onStatus) await opts.onStatus(answer.status);
    reply.status(answer.status);
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name) || name === "x-request-id" || name.startsWith(":")) continue;
      reply.header(name, value);
    }
    reply.headers(opts.responseHeaders ?? {});
    if (!Buffer.isBuffer(answer.body)) answer.body.on("error", (err) => req.log.warn({ err: err.message }, "upstream response broke off"));
    return reply.send(answer.body);
  }

  /**
   * Over undici's HTTP/1.1 pool. Small answers of known length (nearly every API call and long
   * poll) are read whole and written in one go, which costs less than piping a stream for a
   * kilobyte; large ones (register's state, downloads) stream through.
   */
  private async viaHttp1(
    req: FastifyRequest,
    opts: ForwardOptions,
    method: string,
    headers: Record<string, string | string[]>,
    hasBody: boolean,
    signal: AbortSignal,
  ): Promise<UpstreamAnswer> {
    const limited = hasBody && opts.body === undefined && opts.maxBodyBytes !== undefined ? limitBody(req, opts.maxBodyBytes) : null;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(opts.baseUrl + opts.path, {
        method: method as "GET",
        headers,
        body: hasBody ? (opts.body ?? limited?.stream ?? req.raw) : undefined,
        // undici closes the connection after a body on a method that does not expect one
        // (DELETE /events carries its queue_id so); our services read such bodies properly.
        reset: false,
        dispatcher: this.agent,
        signal,
      });
    } catch (err) {
      if (limited?.exceeded()) throw new ApiError("REQUEST_TOO_LARGE", "Request body too large", { status: 413 });
      throw err;
    }
    const length = Number(res.headers["content-length"] ?? NaN);
    if (length <= BUFFERED_RESPONSE_BYTES) {
      return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
    }
    return { status: res.statusCode, headers: res.headers, body: res.body };
  }

  private pollUpstream(baseUrl: string): H2Upstream {
    let upstream = this.pollUpstreams.get(baseUrl);
    if (!upstream) {
      upstream = new H2Upstream(
        baseUrl,
        {
          connections: this.opts.longPollConnections,
          maxAgeMs: this.opts.longPollConnectionMaxAgeMs,
          timeoutMs: this.opts.timeoutMs,
          connectTimeoutMs: this.opts.connectTimeoutMs,
        },
        this.log,
      );
      this.pollUpstreams.set(baseUrl, upstream);
    }
    return upstream;
  }

  /** Long polls waiting on an upstream now. */
  get heldPollCount(): number {
    return this.heldPolls.size;
  }

  /** Open HTTP/2 connections carrying long polls, over all upstreams. */
  get pollConnectionCount(): number {
    let n = 0;
    for (const upstream of this.pollUpstreams.values()) n += upstream.openConnections;
    return n;
  }

  /**
   * Ends the long polls waiting on an upstream with a 503 so that shutdown does not wait up to
   * 90 s for them; clients poll again (through another replica) and their queues are intact.
   */
  releaseLongPolls(): void {
    for (const abort of this.heldPolls) abort.abort();
    this.heldPolls.clear();
  }

  async close(): Promise<void> {
    for (const upstream of this.pollUpstreams.values()) upstream.close();
    await this.agent.close().catch((err) => this.log.warn({ err: (err as Error).message }, "closing upstream agent"));
  }
}

/** The request body, failing past `max` bytes; the rest is then read and dropped so the client gets its answer. */
function limitBody(req: FastifyRequest, max: number): { stream: Transform; exceeded: () => boolean } {
  let size = 0;
  let over = false;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size <= max) return done(null, chunk);
      over = true;
      req.raw.unpipe(stream);
      req.raw.resume();
      done(new Error("request body too large"));
    },
  });
  req.raw.pipe(stream);
  return { stream, exceeded: () => over };
}

/**
 * Whether a poll may be one the events service holds (it names a queue and may block): the others
 * (registering a queue, `dont_block`) it would refuse over HTTP/2 and take over HTTP/1.1 anyway.
 */
function mayBeHeld(path: string): boolean {
  return path.includes("queue_id=") && !/[?&]dont_block=(true|1)(&|$)/i.test(path);
}

function requestHasBody(req: FastifyRequest): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}
