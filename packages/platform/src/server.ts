import { randomUUID } from "node:crypto";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import formbody from "@fastify/formbody";
import multipart from "@fastify/multipart";
import { fastifyPath, type ParamSpecs, type ParsedParams, type RouteDef } from "@chat/contracts";
import type { z } from "zod";
import { ApiError, serviceUnavailable } from "./errors";
import { INTERNAL_HEADERS, readIdentity, tokenMatches, type Identity } from "./identity";
import type { Logger } from "./logger";
import { createMetrics } from "./metrics";
import { parseParams } from "./params";

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
}

export interface HandlerContext<S extends ParamSpecs> {
  params: ParsedParams<S>;
  /** The caller. On `auth: "none"` routes use `identityOrNull`. */
  identity: Identity;
  identityOrNull: Identity | null;
  req: FastifyRequest;
  reply: FastifyReply;
}

export type Handler<S extends ParamSpecs, R extends z.ZodType> = (
  ctx: HandlerContext<S>,
) => Promise<z.input<R>> | z.input<R>;

declare module "fastify" {
  interface FastifyInstance {
    serverOptions: ServerOptions;
  }
  interface FastifyRequest {
    formFields?: Record<string, unknown>;
  }
}

/** Connection-level failures of PostgreSQL, Redis or RabbitMQ: a 503, never a 500. */
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "57P01", "57P02", "57P03", "08000", "08001", "08003", "08006"]);

export function isUnavailableError(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  if (e.code && UNAVAILABLE_CODES.has(e.code)) return true;
  const m = e.message ?? "";
  return /Connection terminated|timeout exceeded when trying to connect|Connection is closed|connect ECONNREFUSED|Client has encountered a connection error/i.test(m);
}

/** Builds a service's fastify instance: logging, request ids, Zulip errors, health, metrics. Never listens. */
export function createServer(opts: ServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: opts.logger as FastifyBaseLogger,
    requestIdHeader: INTERNAL_HEADERS.requestId,
    genReqId: () => randomUUID(),
    bodyLimit: opts.bodyLimit ?? 5 * 1024 * 1024,
    disableRequestLogging: false,
    // Long polls are held up to the poll timeout; do not cut them.
    requestTimeout: 0,
    return503OnClosing: true,
  });
  app.decorate("serverOptions", opts);

  app.register(formbody);
  app.register(multipart, { limits: { fileSize: opts.maxUploadBytes ?? 100 * 1024 * 1024, files: 1, fieldSize: 1024 * 1024 } });
  // Zulip ignores bodies of other types; so do we, instead of answering 415.
  app.addContentTypeParser("*", (_req, payload, done) => {
    payload.resume();
    payload.on("end", () => done(null, undefined));
    payload.on("error", (err) => done(err, undefined));
  });

  app.addHook("onSend", async (req, reply) => {
    reply.header(INTERNAL_HEADERS.requestId, req.id);
  });

  const metrics = createMetrics(opts.name);
  app.addHook("onResponse", async (req, reply) => {
    metrics.observe(req.method, req.routeOptions.url ?? "unmatched", reply.statusCode, reply.elapsedTime / 1000);
  });

  app.setErrorHandler((err, req, reply) => {
    const apiError = toApiError(err);
    if (apiError.status >= 500) req.log.error({ err }, "request failed");
    reply.status(apiError.status).headers(apiError.headers).send(apiError.body());
  });

  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send({ result: "error", msg: "Not Found", code: "BAD_REQUEST" });
  });

  app.get("/health", async () => ({ status: "ok", service: opts.name }));
  app.get("/ready", async (_req, reply) => {
    const checks = Object.entries(opts.readiness ?? {});
    const results = await Promise.all(
      checks.map(async ([name, check]) => {
        try {
          await withTimeout(check(), 2000);
          return [name, "ok"] as const;
        } catch (err) {
          return [name, (err as Error).message || "failed"] as const;
        }
      }),
    );
    const failed = results.filter(([, r]) => r !== "ok");
    reply.status(failed.length ? 503 : 200);
    return { status: failed.length ? "unavailable" : "ready", service: opts.name, checks: Object.fromEntries(results) };
  });
  app.get("/metrics", async (_req, reply) => {
    reply.header("Content-Type", metrics.registry.contentType);
    return metrics.registry.metrics();
  });
  return app;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then((v) => (clearTimeout(t), resolve(v)), (e) => (clearTimeout(t), reject(e)));
  });
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isUnavailableError(err)) return serviceUnavailable();
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (e.statusCode === 413 || e.code === "FST_ERR_CTP_BODY_TOO_LARGE" || e.code === "FST_REQ_FILE_TOO_LARGE") {
    return new ApiError("REQUEST_TOO_LARGE", "Request body too large", { status: 413 });
  }
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError("BAD_REQUEST", e.message ?? "Bad request", { status: e.statusCode === 404 ? 404 : 400 });
  }
  return new ApiError(null, "Internal server error", { status: 500 });
}

function isFormRequest(req: FastifyRequest): boolean {
  const type = String(req.headers["content-type"] ?? "").toLowerCase();
  return type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data");
}

/** Collects multipart text fields; a stray file part on a non-upload route is drained and reported as ignored. */
async function readMultipartFields(req: FastifyRequest): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  for await (const part of req.parts()) {
    if (part.type === "file") {
      part.file.resume();
      fields[part.fieldname] = { file: true };
    } else {
      fields[part.fieldname] = typeof part.value === "string" ? part.value : String(part.value);
    }
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
  app.route({
    method: def.method,
    url: fastifyPath(def),
    handler: async (req, reply) => {
      if (!tokenMatches(req.headers[INTERNAL_HEADERS.token], opts.internalToken)) {
        throw new ApiError("UNAUTHORIZED", "Internal token missing or wrong", { status: 401 });
      }
      const identity = readIdentity(req.headers);
      if (def.auth === "user" && !identity) {
        throw new ApiError("UNAUTHORIZED", "Not logged in: API authentication or user session required", { status: 401 });
      }
      let body: Record<string, unknown> = {};
      if (!def.upload && isFormRequest(req)) {
        body = req.isMultipart() ? await readMultipartFields(req) : ((req.body as Record<string, unknown>) ?? {});
      }
      const { values, ignored } = parseParams(def.params, {
        body,
        query: (req.query as Record<string, unknown>) ?? {},
        path: (req.params as Record<string, string>) ?? {},
      });
      const data = await handler({ params: values, identity: identity as Identity, identityOrNull: identity, req, reply });
      if (reply.sent) return reply;
      if (opts.validateResponses) {
        const check = def.response.safeParse(data);
        if (!check.success) {
          req.log.error({ issues: check.error.issues, route: def.path }, "response violates its contract");
          throw new Error(`Response of ${def.method} ${def.path} violates its contract: ${JSON.stringify(check.error.issues)}`);
        }
      }
      const envelope: Record<string, unknown> = { result: "success", msg: "", ...(data as object) };
      if (ignored.length) envelope.ignored_parameters_unsupported = ignored;
      return envelope;
    },
  });
}
