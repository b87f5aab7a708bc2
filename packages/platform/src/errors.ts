import { ErrorCodes, type ErrorCode } from "@chat/contracts";

/**
 * The one error type handlers and actions throw. The server's error handler renders it as
 * Zulip's envelope: `{result: "error", msg, code, ...extra}` with `status`.
 */
export class ApiError extends Error {
  readonly code: ErrorCode | null;
  readonly status: number;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode | null,
    msg: string,
    opts: { status?: number; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(msg);
    this.code = code;
    this.status = opts.status ?? (code ? ErrorCodes[code] : 400);
    this.extra = opts.extra ?? {};
    this.headers = opts.headers ?? {};
  }

  body(): Record<string, unknown> {
    // Zulip answers a few "errors" with a 2xx status (an unsupported webhook event): those succeed.
    const result = this.status >= 200 && this.status < 300 ? "success" : "error";
    const body: Record<string, unknown> = { result, msg: this.message };
    if (this.code) body.code = this.code;
    return { ...body, ...this.extra };
  }
}

export const badRequest = (msg: string, extra?: Record<string, unknown>) =>
  new ApiError("BAD_REQUEST", msg, { extra });

/** Zulip's `ResourceNotFoundError`: code BAD_REQUEST, HTTP 404 (drafts, scheduled messages). */
export const resourceNotFound = (msg: string) => new ApiError("BAD_REQUEST", msg, { status: 404 });

export const unauthorized = (msg: string) =>
  new ApiError("UNAUTHORIZED", msg, { headers: { "WWW-Authenticate": 'Basic realm="zulip"' } });

export const missingParam = (name: string) =>
  new ApiError("REQUEST_VARIABLE_MISSING", `Missing '${name}' argument`, { extra: { var_name: name } });

export const streamDoesNotExist = (by: { name: string } | { id: number }) =>
  "name" in by
    ? new ApiError("STREAM_DOES_NOT_EXIST", `Channel '${by.name}' does not exist`, { extra: { stream: by.name } })
    : new ApiError("STREAM_DOES_NOT_EXIST", `Channel with ID '${by.id}' does not exist`, { extra: { stream_id: by.id } });

export const serviceUnavailable = (msg = "Service temporarily unavailable; try again shortly") =>
  new ApiError("SERVICE_UNAVAILABLE", msg, { headers: { "Retry-After": "5" } });
