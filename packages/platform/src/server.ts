import { randomUUID } from "node:crypto";
import http from "node:http";
import http2 from "node:http2";
import type { Socket } from "node:net";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import multipart from "@fastify/multipart";
import { fastifyPath, fastifyRoutePath, type ParamSpecs, type ParsedParams, type RouteDef } from "@chat/contracts";
import type { z } from "zod";
import { ApiError, resourceNotFound, serviceUnavailable } from "./errors";
import { parseFormBody, repairQuery } from "./form";
import { flatUuid, INTERNAL_HEADERS, readIdentity, tokenMatches, type Identity } from "./identity";
import type { Logger } from "./logger";
import { createMetrics, type GaugeSpec } from "./metrics";
import { errorPage, PAGE_HEADERS, pageUrlTest } from "./pages";
import { parseParams } from "./params";
import { withRequestId } from "./request-context";

/**
 * The largest request body a service takes outside uploads (a form, an integration's payload),
 * and so the largest form field, whether urlencoded or multipart. The gateway refuses a larger
 * one itself, with the same 413.
 */
export const MAX_REQUEST_BODY_BYTES = 5 * 1024 * 1024;

export interface ServerOptions {
  name: string;
  logger: Logger;
  internalToken: string;
  /** Named checks behind `/ready`; each rejects when its dependency does not answer. */
  readiness?: Record<string, () => Promise<unknown>>;
  /** Largest accepted request body (form fields); uploads have their own limit. */
  bodyLimit?: number;
  /** Check every success body against its route's response schema (tests turn this on). */
  validateResponses?: boolean;
  maxUploadBytes?: number;
  /** How long one readiness check may take before it counts as failed (default 2000 ms). */
  readinessTimeoutMs?: number;
  /** The service's own gauges on `/metrics`, by metric name. */
  gauges?: Record<string, GaugeSpec>;
  /**
   * Also speak HTTP/2 with prior knowledge (h2c) on the same port, for a stream route (see
   * StreamRoute). Each connection's first bytes tell which protocol it speaks.
   */
  http2?: boolean;
  /**
   * A route table holding the service's web pages (routes with `page`; see pageUrlTest): an
   * error at their paths is answered as an HTML page rather than Zulip's JSON.
   */
  pageRoutes?: readonly RouteDef[];
}

export interface HandlerContext<S extends ParamSpecs> {
  params: ParsedParams<S>;
  /** The caller. On `auth: "none"` routes use `identityOrNull`. */
  identity: Identity;
  identityOrNull: Identity | null;
  req: FastifyRequest;
  reply: FastifyReply;
}

/**
 * A success body the handler serialized itself, envelope included (`{"result":"success","msg":"",...}`),
 * sent as it is: for large bodies put together from other services' JSON without parsing it.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

export type Handler<S extends ParamSpecs, R extends z.ZodType> = (
  ctx: HandlerContext<S>,
) => Promise<z.input<R> | JsonText> | z.input<R> | JsonText;

declare module "fastify" {
  interface FastifyInstance {
    serverOptions: ServerOptions;
  }
  interface FastifyRequest {
    formFields?: Record<string, unknown>;
    /** Overrides the metrics route label (the gateway names the contract route behind its wildcard). */
    metricsRoute?: string;
    /** The body as it came, on an integration URL (a contract route with `incomingWebhook`); multipart bodies excepted. */
    rawBody?: Buffer;
  }
}

const shuttingDown = new WeakSet<FastifyInstance>();

/** Whether `app` is shutting down (see markShuttingDown). */
export function isShuttingDown(app: FastifyInstance): boolean {
  return shuttingDown.has(app);
}

/**
 * A request a service answers ahead of fastify's routing: the events service's held polls,
 * thousands at a time, where fastify's per-request objects would be most of their memory. It
 * returns false for any request it does not take whole, and fastify handles that one as usual.
 */
export type RawRoute = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

/**
 * A request a service takes over HTTP/2 (see ServerOptions.http2): the gateway carries the events
 * service's held polls as streams of a few connections, where HTTP/1.1 needs a connection (a
 * socket, a parser, request and response objects) per held poll. It returns false for any
 * stream it does not take whole; that one is answered 421 (Misdirected Request) with no body,
 * and the caller repeats it over HTTP/1.1, where fastify answers it.
 */
export type StreamRoute = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean;

interface AppInternals {
  raw: { route: RawRoute | null; stream: StreamRoute | null; sessions: Set<http2.ServerHttp2Session> };
  metrics: ReturnType<typeof createMetrics>;
}
const internals = new WeakMap<FastifyInstance, AppInternals>();

/** Puts `route` in front of `app`'s router (see RawRoute). */
export function setRawRoute(app: FastifyInstance, route: RawRoute): void {
  internals.get(app)!.raw.route = route;
}

/** Takes `app`'s HTTP/2 streams (see StreamRoute); the app must be created with `http2`. */
export function setStreamRoute(app: FastifyInstance, route: StreamRoute): void {
  if (!app.serverOptions.http2) throw new Error("setStreamRoute needs a server created with http2: true");
  internals.get(app)!.raw.stream = route;
}

/** HTTP/2's connection preface begins so; no HTTP/1 request line can (PRI is only the preface's). */
const H2_PREFACE_START = Buffer.from("PRI ");

/**
 * Hands each connection of `server` to HTTP/1.1 or to `h2` by its first bytes. Whatever was read
 * is put back first: both servers read what a socket already buffered before its handle.
 */
function acceptPriorKnowledgeH2(server: http.Server, h2: http2.Http2Server): void {
  const http1 = server.listeners("connection") as Array<(socket: Socket) => void>;
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    let seen: Buffer = Buffer.alloc(0);
    const onReadable = () => {
      let chunk: Buffer | null;
      while ((chunk = socket.read() as Buffer | null) !== null) seen = seen.length ? Buffer.concat([seen, chunk]) : chunk;
      const n = Math.min(seen.length, H2_PREFACE_START.length);
      const isH2 = seen.subarray(0, n).equals(H2_PREFACE_START.subarray(0, n));
      // Too few bytes to tell yet (an HTTP/1 request line is never this short).
      if (isH2 && n < H2_PREFACE_START.length) return;
      socket.removeListener("readable", onReadable);
      socket.removeListener("end", drop);
      socket.removeListener("error", drop);
      socket.removeListener("timeout", drop);
      socket.setTimeout(0);
      if (seen.length) socket.unshift(seen);
      if (isH2) h2.emit("connection", socket);
      else for (const listener of http1) listener.call(server, socket);
    };
    // A connection that fails or says nothing before its first bytes is dropped.
    const drop = () => socket.destroy();
    socket.on("readable", onReadable);
    socket.on("end", drop);
    socket.on("error", drop);
    socket.setTimeout(KEEP_ALIVE_TIMEOUT_MS, drop);
  });
}

/** Marks `app` as shutting down: responses carry `Connection: close` (runService calls it on SIGTERM). */
export function markShuttingDown(app: FastifyInstance): void {
  shuttingDown.add(app);
}

/** Connection-level failures of PostgreSQL, Redis or RabbitMQ: a 503, never a 500. */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  // PostgreSQL: admin shutdown, crash shutdown, cannot connect now, connection exceptions, too many connections.
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "53300",
]);

const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Connection is closed|connect ECONNREFUSED|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end|max retries per request|Stream isn't writeable|RabbitMQ is not connected/i;

export function isUnavailableError(err: unknown): boolean {
  const e = err as { code?: string; message?: string; errors?: unknown[] } | null;
  if (!e || typeof e !== "object") return false;
  if (e.code && UNAVAILABLE_CODES.has(e.code)) return true;
  if (UNAVAILABLE_MESSAGES.test(e.message ?? "")) return true;
  // Node reports a refused dual-stack connect as an AggregateError of the per-address errors.
  return Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every(isUnavailableError);
}

/**
 * Tens of thousands of held streams share a connection; Node's default cap of a session's memory
 * (10 MB) would refuse streams long before that. A peer that goes past this gets its new streams
 * refused (and repeats them over HTTP/1.1).
 */
const H2_SESSION_MEMORY_MB = 256;
const H2_MAX_STREAMS = 1_000_000;

function h2Server(raw: AppInternals["raw"], log: Logger): http2.Http2Server {
  const h2 = http2.createServer({ maxSessionMemory: H2_SESSION_MEMORY_MB, settings: { maxConcurrentStreams: H2_MAX_STREAMS, enablePush: false } });
  h2.on("session", (session: http2.ServerHttp2Session) => {
    raw.sessions.add(session);
    session.once("close", () => raw.sessions.delete(session));
  });
  h2.on("sessionError", (err: Error) => log.warn({ err: err.message }, "HTTP/2 connection failed"));
  h2.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    // A peer's reset (other than a cancel) is an 'error' on the stream; nothing to do about it.
    stream.on("error", ignoreStreamError);
    let taken = false;
    try {
      taken = raw.stream?.(stream, headers) ?? false;
    } catch (err) {
      log.error({ err }, "stream route failed; the stream is refused");
    }
    if (!taken && !stream.destroyed && !stream.headersSent) stream.respond({ ":status": 421 }, { endStream: true });
  });
  return h2;
}

function ignoreStreamError(): void {}

/** fastify's default: longer than a load balancer's idle timeout (usually 60 s). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** HTTP/1.1 requires a Host header (HTTP/1.0 did not): node refuses a request without one. */
function lacksHost(req: http.IncomingMessage): boolean {
  return req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined;
}

const missingHost = () => new ApiError("BAD_REQUEST", "Missing Host header", { status: 400 });

/** What a request node's parser refused is answered with, by the parser's error code. */
function parseFailure(code: string | undefined): ApiError {
  if (code === "HPE_HEADER_OVERFLOW") return new ApiError("BAD_REQUEST", "Request header fields too large", { status: 431 });
  return new ApiError("BAD_REQUEST", "Malformed HTTP request", { status: code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400 });
}

/** The headers and body of an answer to a request fastify never saw: a page's error page, or Zulip's JSON. */
function unparsedBody(page: boolean, err: ApiError): { headers: Record<string, string>; body: string } {
  const body = page ? errorPage(err) : JSON.stringify(err.body());
  const type = page ? PAGE_HEADERS : { "content-type": "application/json; charset=utf-8" };
  return { headers: { ...type, "content-length": String(Buffer.byteLength(body)), connection: "close", [INTERNAL_HEADERS.requestId]: randomUUID() }, body };
}

/** The same as raw HTTP/1.1 text, for a socket whose request could not be parsed. */
function unparsedAnswer(page: boolean, err: ApiError): string {
  const { headers, body } = unparsedBody(page, err);
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return `HTTP/1.1 ${err.status} ${http.STATUS_CODES[err.status] ?? "Error"}\r\n${lines.join("")}\r\n${body}`;
}

function answerUnparsed(res: http.ServerResponse, page: boolean, err: ApiError): void {
  const { headers, body } = unparsedBody(page, err);
  res.writeHead(err.status, headers);
  res.end(body);
}

/**
 * The path of the request whose bytes node's parser failed on, from the chunk it failed in
 * (`rawPacket`): that chunk's last request line, if it holds one. A request whose request line
 * came in an earlier chunk than the failure (a slow client's) cannot be told, and is answered
 * as the API is.
 */
function requestPathOf(packet: unknown): string | null {
  if (!Buffer.isBuffer(packet)) return null;
  let path: string | null = null;
  for (const m of packet.toString("latin1").matchAll(/(?:^|\r\n\r\n)[A-Z]{1,16} (\/[^\s?]*)/g)) path = m[1];
  return path;
}

/** Builds a service's fastify instance: logging, request ids, Zulip errors, health, metrics. Never listens. */
/** How much past the body limit a refused body is still read (so its 413 arrives) before the socket is cut. */
const DRAIN_PAST_LIMIT_BYTES = 64 * 1024 * 1024;

export function createServer(opts: ServerOptions): FastifyInstance {
  const raw: AppInternals["raw"] = { route: null, stream: null, sessions: new Set() };
  const isPageUrl = pageUrlTest(opts.pageRoutes ?? []);
  /** An error as its request's client reads it: an HTML page on a page's path, else Zulip's JSON. */
  const sendError = (req: FastifyRequest, reply: FastifyReply, apiError: ApiError, headers: Record<string, string>) =>
    isPageUrl(req.url)
      ? reply.status(apiError.status).headers({ ...headers, ...PAGE_HEADERS }).send(errorPage(apiError))
      : reply.status(apiError.status).headers(headers).send(apiError.body());
  const app = Fastify({
    // fastify's own HTTP/1 server, with a service's raw route (if any) asked first.
    serverFactory: (handler) => {
      // A request without a Host header is answered below rather than by node's bare 400.
      const server = http.createServer({ requireHostHeader: false }, (req, res) => {
        if (lacksHost(req)) return answerUnparsed(res, isPageUrl(req.url ?? "/"), missingHost());
        let taken = false;
        try {
          taken = raw.route?.(req, res) ?? false;
        } catch (err) {
          // A raw route checks before it takes a request; a throw there leaves it to fastify.
          opts.logger.error({ err }, "raw route failed; fastify answers the request");
        }
        if (!taken) handler(req, res);
      });
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      server.requestTimeout = 0;
      if (opts.http2) acceptPriorKnowledgeH2(server, h2Server(raw, opts.logger));
      return server;
    },
    loggerInstance: opts.logger as FastifyBaseLogger,
    requestIdHeader: INTERNAL_HEADERS.requestId,
    genReqId: () => randomUUID(),
    bodyLimit: opts.bodyLimit ?? MAX_REQUEST_BODY_BYTES,
    // Connection-level parse errors (bad Content-Length, garbage request line, a request line
    // and headers past node's limit) get our envelope too, or a page's error page.
    clientErrorHandler: (err, socket) => {
      if (!socket.writable) return socket.destroy(err);
      // Node's rawPacket is a Buffer (fastify's type says otherwise).
      const { code, rawPacket } = err as unknown as { code?: string; rawPacket?: unknown };
      const path = requestPathOf(rawPacket);
      socket.end(unparsedAnswer(path !== null && isPageUrl(path), parseFailure(code)));
    },
    // Long polls are held up to the poll timeout; do not cut them.
    requestTimeout: 0,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // fastify's default (100) answered 414 for the URL of an upload whose name is long (names keep
    // up to 200 characters, percent-encoded up to 9 bytes each).
    routerOptions: { maxParamLength: 2048 },
    // Requests arriving on kept-alive connections while we shut down get our own 503 (below).
    return503OnClosing: false,
    // A malformed URL is answered by fastify before routing (and before the onSend hook that
    // sets the request id header); give it our envelope too.
    frameworkErrors: (err, req, reply) => {
      const apiError = toApiError(err);
      sendError(req as FastifyRequest, reply as FastifyReply, apiError, { ...apiError.headers, [INTERNAL_HEADERS.requestId]: req.id });
    },
  });
  app.decorate("serverOptions", opts);
  const bodyLimit = opts.bodyLimit ?? MAX_REQUEST_BODY_BYTES;

  // Urlencoded bodies decoded as Django decodes them for Zulip: the charset, bad escapes (see form.ts).
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "buffer", bodyLimit }, (req, body, done) => {
    // Zulip's webhook views read a JSON body whatever its type says (`curl -d` calls it a form).
    if (keepsRawBody(req)) req.rawBody = body as Buffer;
    done(null, parseFormBody(body as Buffer, req.headers["content-type"]));
  });
  // A multipart field may be as large as the body, as a urlencoded one may: a GitHub payload
  // over busboy's 1 MiB default was refused in a multipart form and taken in a urlencoded one.
  app.register(multipart, { limits: { fileSize: opts.maxUploadBytes ?? 100 * 1024 * 1024, files: 1, fieldSize: bodyLimit } });
  // Only form bodies carry parameters (as in Zulip); JSON, text and anything else is drained
  // and ignored instead of answering 400 or 415.
  app.removeContentTypeParser(["application/json", "text/plain"]);
  app.addContentTypeParser("*", (req, payload, done) => {
    // A raw-stream parser gets no limit from fastify: count, and refuse past the limit. The rest
    // is still read (and dropped), as fastify does past its own limit: a socket closed with the
    // client's bytes unread is reset, and the client would lose the 413 with it.
    let size = 0;
    let finished = false;
    // An integration URL's body is its payload: kept, within the limit.
    const kept: Buffer[] | null = keepsRawBody(req) ? [] : null;
    const finish = (err: Error | null) => {
      if (finished) return;
      finished = true;
      if (kept && !err) req.rawBody = Buffer.concat(kept);
      done(err, undefined);
    };
    payload.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (kept && size <= bodyLimit) kept.push(chunk);
      if (size > bodyLimit) finish(new ApiError("REQUEST_TOO_LARGE", "Request body too large", { status: 413 }));
      // A client that goes on sending far past it is cut off rather than read without end.
      if (size > bodyLimit + DRAIN_PAST_LIMIT_BYTES) payload.destroy();
    });
    payload.on("end", () => finish(null));
    payload.on("error", (err) => finish(err));
  });

  // app.close() (without runService, as in tests) shuts down too: answers to requests fastify does
  // not see (a raw route's) must close their connections, or close() waits for keep-alive.
  app.addHook("preClose", async () => markShuttingDown(app));
  // Node's close() drops the keep-alive connections idle at that moment only; one still reading
  // a request's body (an early answer's, which node reads and drops) goes idle later and would
  // hold close() until its keep-alive timeout. Dropped as they go idle (runService does it too).
  let reaper: NodeJS.Timeout | undefined;
  app.addHook("preClose", async () => {
    reaper = setInterval(() => app.server.closeIdleConnections?.(), 100);
    reaper.unref();
  });
  app.addHook("onClose", async () => clearInterval(reaper));
  // HTTP/2 connections are told to go away (GOAWAY): their open streams still finish (the events
  // service answers its held polls at preClose), then they close and the server can.
  if (opts.http2) app.addHook("preClose", async () => raw.sessions.forEach((s) => s.close()));

  app.addHook("onRequest", async () => {
    if (shuttingDown.has(app)) throw serviceUnavailable("The server is shutting down; try again");
  });

  app.addHook("onSend", async (req, reply) => {
    reply.header(INTERNAL_HEADERS.requestId, req.id);
    // While shutting down, tell keep-alive clients to reconnect elsewhere so the server can close.
    if (shuttingDown.has(app)) reply.header("connection", "close");
  });

  const metrics = createMetrics(opts.name, opts.gauges);
  internals.set(app, { raw, metrics });
  app.addHook("onResponse", async (req, reply) => {
    // Unmatched URLs share one label so random paths cannot blow up the series count.
    metrics.observe(req.method, req.metricsRoute ?? req.routeOptions.url ?? "unmatched", reply.statusCode, reply.elapsedTime / 1000);
  });

  app.setErrorHandler((err, req, reply) => {
    const { apiError, headers } = errorAnswer(err, req.log);
    sendError(req, reply, apiError, headers);
  });

  app.setNotFoundHandler((req, reply) => {
    sendError(req, reply, resourceNotFound("Not Found"), {});
  });

  app.get("/health", async () => ({ status: "ok", service: opts.name }));
  app.get("/ready", async (_req, reply) => {
    const checks = Object.entries(opts.readiness ?? {});
    const results = await Promise.all(
      checks.map(async ([name, check]) => {
        try {
          await withTimeout(Promise.resolve().then(check), opts.readinessTimeoutMs ?? 2000);
          return [name, "ok"] as const;
        } catch (err) {
          return [name, (err as Error)?.message || "failed"] as const;
        }
      }),
    );
    const failed = results.filter(([, r]) => r !== "ok").map(([name]) => name);
    reply.status(failed.length ? 503 : 200);
    return {
      status: failed.length ? "unavailable" : "ready",
      service: opts.name,
      checks: Object.fromEntries(results),
      ...(failed.length ? { failed } : {}),
    };
  });
  app.get("/metrics", async (_req, reply) => {
    reply.header("Content-Type", metrics.contentType);
    return metrics.text();
  });
  return app;
}

/** The Zulip error a failure shows the client, with its headers; server-side failures are logged. */
function errorAnswer(err: unknown, log: FastifyBaseLogger): { apiError: ApiError; headers: Record<string, string> } {
  const apiError = toApiError(err);
  if (apiError.status === 503) log.warn({ err: (err as Error)?.message }, "dependency unavailable");
  else if (apiError.status >= 500) log.error({ err }, "request failed");
  const headers = { ...apiError.headers };
  // Every 401 tells HTTP clients how to authenticate, as Zulip's API does.
  if (apiError.status === 401 && !Object.keys(headers).some((h) => h.toLowerCase() === "www-authenticate")) {
    headers["WWW-Authenticate"] = 'Basic realm="zulip"';
  }
  return { apiError, headers };
}

/** With VALIDATE_RESPONSES (tests): a success body its route's contract does not allow is a 500. */
function checkResponse(def: RouteDef, data: unknown, log: FastifyBaseLogger): void {
  const check = def.response.safeParse(data);
  if (check.success) return;
  log.error({ issues: check.error.issues, route: def.path }, "response violates its contract");
  // The details make the failing test readable.
  throw new ApiError(null, `Response of ${def.method} ${def.path} violates its contract: ${JSON.stringify(check.error.issues)}`, {
    status: 500,
  });
}

/** A request a raw or stream route took: what its answer needs besides the body. */
export interface RawExchange {
  /** Where the answer goes: the HTTP/1.1 response, or the HTTP/2 stream. */
  readonly res: http.ServerResponse | http2.ServerHttp2Stream;
  readonly method: string;
  readonly id: string;
  readonly startedAt: number;
}

/**
 * Answers a raw route's requests (see RawRoute) as fastify answers a contract route's: the
 * success envelope or the Zulip error, the request id header, `Connection: close` while
 * shutting down, the request metrics and fastify's request log lines.
 */
export class RawResponder {
  private readonly label: string;
  private readonly log: Logger;

  constructor(
    private readonly app: FastifyInstance,
    private readonly def: RouteDef,
  ) {
    this.label = fastifyPath(def);
    this.log = app.serverOptions.logger;
  }

  begin(req: http.IncomingMessage, res: http.ServerResponse): RawExchange {
    return this.start(res, req.method ?? "GET", req.url ?? "", req.headers, req.socket.remoteAddress);
  }

  beginStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): RawExchange {
    return this.start(stream, headers[":method"] ?? "GET", headers[":path"] ?? "", headers, stream.session?.socket?.remoteAddress);
  }

  private start(res: RawExchange["res"], method: string, url: string, headers: http.IncomingHttpHeaders, remoteAddress: string | undefined): RawExchange {
    const given = headers[INTERNAL_HEADERS.requestId];
    const id = typeof given === "string" && given ? given : flatUuid();
    if (this.log.isLevelEnabled("info")) this.log.info({ reqId: id, req: { method, url, remoteAddress } }, "incoming request");
    return { res, method, id, startedAt: performance.now() };
  }

  /** A success body the route put together itself (checked against the contract when asked to). */
  successJson(x: RawExchange, body: string): void {
    if (this.app.serverOptions.validateResponses) {
      try {
        const { result: _result, msg: _msg, ...data } = JSON.parse(body) as Record<string, unknown>;
        checkResponse(this.def, data, this.log as FastifyBaseLogger);
      } catch (err) {
        this.fail(x, err);
        return;
      }
    }
    this.write(x, 200, body, null);
  }

  fail(x: RawExchange, err: unknown): void {
    const { apiError, headers } = errorAnswer(err, this.log.child({ reqId: x.id }) as FastifyBaseLogger);
    this.write(x, apiError.status, JSON.stringify(apiError.body()), headers);
  }

  private write(x: RawExchange, status: number, body: string, headers: Record<string, string> | null): void {
    const { res } = x;
    if (res instanceof http.ServerResponse) {
      if (!res.destroyed && !res.writableEnded) {
        res.writeHead(status, {
          ...headers,
          "content-type": "application/json; charset=utf-8",
          "content-length": Buffer.byteLength(body),
          [INTERNAL_HEADERS.requestId]: x.id,
          ...(shuttingDown.has(this.app) ? { connection: "close" } : {}),
        });
        res.end(body);
      }
    } else if (!res.destroyed && !res.closed && !res.headersSent) {
      // HTTP/2 has no Connection header: a shutting-down server's GOAWAY says it.
      const h2Headers: http2.OutgoingHttpHeaders = {
        ":status": status,
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(body),
        [INTERNAL_HEADERS.requestId]: x.id,
      };
      if (headers) for (const name in headers) h2Headers[name.toLowerCase()] = headers[name];
      res.respond(h2Headers);
      res.end(body);
    }
    const elapsedMs = performance.now() - x.startedAt;
    internals.get(this.app)!.metrics.observe(x.method, this.label, status, elapsedMs / 1000);
    if (this.log.isLevelEnabled("info")) {
      this.log.info({ reqId: x.id, res: { statusCode: status }, responseTime: elapsedMs }, "request completed");
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });
}

const TOO_LARGE_CODES = new Set(["FST_ERR_CTP_BODY_TOO_LARGE", "FST_REQ_FILE_TOO_LARGE", "FST_PARTS_LIMIT", "FST_FILES_LIMIT", "FST_FIELDS_LIMIT"]);

/** Maps anything thrown while handling a request to the Zulip error it shows the client. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isUnavailableError(err)) return serviceUnavailable();
  const e = (err ?? {}) as { statusCode?: number; code?: string; message?: string };
  if (e.statusCode === 413 || (e.code && TOO_LARGE_CODES.has(e.code))) {
    return new ApiError("REQUEST_TOO_LARGE", "Request body too large", { status: 413 });
  }
  // fastify's texts for these repeat the request's path: the client is told what is wrong with it.
  if (e.code === "FST_ERR_BAD_URL") return new ApiError("BAD_REQUEST", "Malformed URL", { status: 400 });
  if (e.code === "FST_ERR_MAX_PARAM_LENGTH") return new ApiError("BAD_REQUEST", "URL path segment too long", { status: 414 });
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    // fastify's own client errors (bad content length, unparsable content type, ...): keep their status.
    return new ApiError("BAD_REQUEST", e.message || "Bad request", { status: e.statusCode });
  }
  // busboy's parse failures (no boundary, a part cut short, a bad part header) are the client's.
  if (typeof e.message === "string" && MALFORMED_MULTIPART.test(e.message)) {
    return new ApiError("BAD_REQUEST", "Malformed multipart body", { status: 400 });
  }
  return new ApiError(null, "Internal server error", { status: 500 });
}

/** Whether the request's route is an integration URL, whose service reads the body itself (see registerRoute). */
function keepsRawBody(req: FastifyRequest): boolean {
  return (req.routeOptions?.config as { incomingWebhook?: boolean } | undefined)?.incomingWebhook === true;
}

const MALFORMED_MULTIPART = /^(Multipart: |Malformed part header|Part terminated early|Unexpected end of (form|multipart))/;

function isFormRequest(req: FastifyRequest): boolean {
  const type = String(req.headers["content-type"] ?? "").toLowerCase();
  return type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data");
}

/** Collects multipart text fields; a stray file part on a non-upload route is drained and reported as ignored. */
async function readMultipartFields(req: FastifyRequest): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  try {
    for await (const part of req.parts()) {
      if (part.type === "file") {
        part.file.resume();
        fields[part.fieldname] = { file: true };
      } else {
        if (part.valueTruncated) throw new ApiError("REQUEST_TOO_LARGE", "Request body too large", { status: 413 });
        fields[part.fieldname] = typeof part.value === "string" ? part.value : String(part.value);
      }
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const mapped = toApiError(err);
    // A malformed body (bad boundary, truncated part) is the client's fault, not a 500.
    if (mapped.status >= 500) throw new ApiError("BAD_REQUEST", "Malformed multipart body", { status: 400 });
    throw mapped;
  }
  return fields;
}

/**
 * Mounts a contract route: checks the internal token and identity, parses Zulip-style parameters,
 * runs the handler and wraps its data in the success envelope with `ignored_parameters_unsupported`.
 */
export function registerRoute<S extends ParamSpecs, R extends z.ZodType>(
  app: FastifyInstance,
  def: RouteDef<S, R>,
  handler: Handler<S, R>,
): void {
  const opts = app.serverOptions;
  const metricsRoute = fastifyPath(def);
  app.route({
    method: def.method,
    url: fastifyRoutePath(def),
    config: { incomingWebhook: def.incomingWebhook === true },
    handler: async (req, reply) => {
      // The plain path as the metrics label (the registered one may carry a pattern).
      req.metricsRoute = metricsRoute;
      if (!tokenMatches(req.headers[INTERNAL_HEADERS.token], opts.internalToken)) {
        throw new ApiError("UNAUTHORIZED", "Internal token missing or wrong", { status: 401 });
      }
      let identity = readIdentity(req.headers);
      if (def.auth === "user" && !identity) {
        throw new ApiError("UNAUTHORIZED", "Not logged in: API authentication or user session required", { status: 401 });
      }
      let body: Record<string, unknown> = {};
      if (!def.upload && isFormRequest(req)) {
        body = req.isMultipart() ? await readMultipartFields(req) : ((req.body as Record<string, unknown>) ?? {});
      }
      // Zulip reads the client's name from a `client` parameter anywhere; the gateway streams
      // bodies, so it could only see the query string's, and one in the body is taken here.
      const bodyClient = Array.isArray(body.client) ? body.client[body.client.length - 1] : body.client;
      if (identity && typeof bodyClient === "string" && bodyClient.trim()) identity = { ...identity, client: bodyClient.trim() };
      const { values, ignored: unused } = parseParams(def.params, {
        body,
        query: repairQuery(req.url, (req.query as Record<string, unknown>) ?? {}),
        path: (req.params as Record<string, string>) ?? {},
      });
      const data = await withRequestId(req.id, () =>
        handler({ params: values, identity: identity as Identity, identityOrNull: identity, req, reply }),
      );
      if (reply.sent) return reply;
      // Zulip's webhook views report no unused parameters: a third party's URL may carry anything.
      const ignored = def.incomingWebhook ? [] : unused;
      if (data instanceof JsonText) {
        if (opts.validateResponses) {
          const { result: _result, msg: _msg, ...fields } = JSON.parse(data.text) as Record<string, unknown>;
          checkResponse(def, fields, req.log);
        }
        const text = ignored.length ? `${data.text.slice(0, -1)},"ignored_parameters_unsupported":${JSON.stringify(ignored)}}` : data.text;
        return reply.header("content-type", "application/json; charset=utf-8").send(text);
      }
      if (opts.validateResponses) checkResponse(def, data, req.log);
      const envelope: Record<string, unknown> = { result: "success", msg: "", ...(data as object) };
      if (ignored.length) envelope.ignored_parameters_unsupported = ignored;
      return envelope;
    },
  });
}
