import { z } from "zod";
import type { ParamSpecs } from "./params";

export type ServiceName = "gateway" | "accounts" | "messaging" | "events" | "scheduler";
export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/**
 * Who may call a route:
 * - `user`: HTTP Basic (email + API key) checked by the gateway;
 * - `none`: no authentication (server_settings, fetch_api_key), limited per IP;
 * - `internal`: service-to-service only, never exposed by the gateway.
 */
export type RouteAuth = "user" | "none" | "internal";

export interface RouteDef<P extends ParamSpecs = ParamSpecs, R extends z.ZodType = z.ZodType> {
  method: HttpMethod;
  /** Path below `/api/v1`, Zulip style placeholders: `/users/{user_id}`. */
  path: string;
  service: ServiceName;
  auth: RouteAuth;
  params: P;
  /** The success body without `result`/`msg`/`ignored_parameters_unsupported`. */
  response: R;
  /** The route takes a multipart file upload (streamed, not parsed as parameters). */
  upload?: boolean;
  /** Long-poll: the gateway must not time the request out early. */
  longPoll?: boolean;
  /**
   * Incoming-webhook bots (bot_type 2) may call it with their API key (Zulip's
   * `allow_incoming_webhooks` view flag); every other route refuses them.
   */
  allowIncomingWebhooks?: boolean;
  /**
   * An integration URL (`/external/{name}`) that third-party tools post their own payloads to:
   * the key may come as an `api_key` parameter instead of HTTP Basic, the service gets the raw
   * body, and unused parameters are not reported (Zulip's webhook views).
   */
  incomingWebhook?: boolean;
  /**
   * A web page for people (a form a mail links to), answered in HTML rather than Zulip's JSON:
   * not part of the API description.
   */
  page?: boolean;
  summary?: string;
}

export function route<P extends ParamSpecs, R extends z.ZodType>(def: RouteDef<P, R>): RouteDef<P, R> {
  return def;
}

/** Success bodies are strict: an undeclared key is a contract failure in tests. */
export const success = <S extends z.ZodRawShape>(shape: S) => z.strictObject(shape);
export const empty = z.strictObject({});

/** The fastify-style path for a Zulip-style path: `/users/{user_id}` -> `/api/v1/users/:user_id`. */
export function fastifyPath(def: Pick<RouteDef, "path">): string {
  return "/api/v1" + def.path.replace(/\{(\w+)\}/g, ":$1");
}

/**
 * Placeholders that share a position with another one (`/users/{user_id}` and
 * `/users/{email}`) carry a pattern, so a service's router can tell them apart.
 */
export const PATH_PARAM_PATTERNS: Record<string, string> = { email: "^[^/]*@[^/]*$" };

/** The path a service registers with fastify: `fastifyPath` plus the placeholders' patterns. */
export function fastifyRoutePath(def: Pick<RouteDef, "path">): string {
  return "/api/v1" + def.path.replace(/\{(\w+)\}/g, (_m, name: string) => (PATH_PARAM_PATTERNS[name] ? `:${name}(${PATH_PARAM_PATTERNS[name]})` : `:${name}`));
}
