import type { FastifyRequest } from "fastify";
import type { RouteDef } from "@chat/contracts";
import { ApiError, clientNetwork, MAX_REQUEST_BODY_BYTES, serviceUnavailable, unauthorized, type Clock, type Identity, type Logger, type Role } from "@chat/platform";
import type { Authenticator } from "./auth/authenticate";
import { readBody } from "./body";
import { clientIp, clientName } from "./client-info";
import type { GatewayConfig } from "./config";
import { isFormPost } from "./method-override";
import { rateLimitHeaders, type RateLimiter, type RateLimitResult, type RateLimitRule } from "./rate-limit";

/** Routes that check a password: limited per username against brute force. */
const PASSWORD_ROUTES = new Set(["/fetch_api_key"]);
const MAX_CREDENTIAL_BODY = 64 * 1024;
/** An integration URL's form (a Slack payload, a GitHub one): what the services take. */
const MAX_WEBHOOK_FORM_BODY = MAX_REQUEST_BODY_BYTES;
/** Zulip's bot_type of incoming-webhook bots, whose keys only send messages. */
const INCOMING_WEBHOOK_BOT = 2;

export interface Admission {
  identity: Identity | null;
  responseHeaders: Record<string, string>;
  /** The body, when the gateway had to read it (credential routes); else it streams. */
  body?: Buffer;
  onStatus?: (status: number) => Promise<void>;
}

export interface GateDeps {
  config: GatewayConfig;
  authenticator: Authenticator;
  limiter: RateLimiter;
  clock: Clock;
  log: Logger;
}

/** Who may pass and how often: authentication and every rate limit, before any forwarding. */
export class Gate {
  private readonly rules: Record<"api" | "events" | "ip" | "password" | "authFailures", RateLimitRule>;

  constructor(private readonly deps: GateDeps) {
    const c = deps.config;
    this.rules = {
      api: { name: "user", max: c.RATE_LIMIT_USER_MAX, windowSeconds: c.RATE_LIMIT_USER_WINDOW_SECONDS },
      // GET and DELETE /events count in their own bucket, as Zulip's event server (Tornado) keeps
      // its own; POST /register is served by Django there, so it counts with the rest.
      events: { name: "user-events", max: c.RATE_LIMIT_USER_MAX, windowSeconds: c.RATE_LIMIT_USER_WINDOW_SECONDS },
      ip: { name: "ip", max: c.RATE_LIMIT_IP_MAX, windowSeconds: c.RATE_LIMIT_IP_WINDOW_SECONDS },
      password: { name: "username", max: c.RATE_LIMIT_AUTH_MAX, windowSeconds: c.RATE_LIMIT_AUTH_WINDOW_SECONDS },
      // Wrong credentials per address, with the per-IP numbers: API keys cannot be guessed at speed.
      authFailures: { name: "auth-failures", max: c.RATE_LIMIT_IP_MAX, windowSeconds: c.RATE_LIMIT_IP_WINDOW_SECONDS },
    };
  }

  /**
   * `subdomain` is the organization the request's host names (null on the deployment's own
   * host): an account of another organization is refused there, as Zulip refuses it on another
   * organization's subdomain.
   */
  async admit(req: FastifyRequest, route: RouteDef, subdomain: string | null = null): Promise<Admission> {
    if (route.auth === "user") {
      const key = route.incomingWebhook ? await webhookKey(req) : null;
      const who = await this.authenticate(req, key?.apiKey ?? null);
      // Right credentials, wrong host: not a guess either.
      if (subdomain !== null && who.realmStringId?.toLowerCase() !== subdomain) {
        throw unauthorized("Account is not associated with this subdomain");
      }
      // Right credentials, wrong route: not a guess, so not counted against the address.
      if (who.botType === INCOMING_WEBHOOK_BOT && !route.allowIncomingWebhooks) {
        throw unauthorized("This API is not available to incoming webhook bots.");
      }
      const identity: Identity = { ...who, role: who.role as Role, client: clientName(req) };
      const rule = route.service === "events" && route.path === "/events" ? this.rules.events : this.rules.api;
      const results = await this.check([[rule, `${who.realmId}:${who.userId}`]], false);
      return { identity, body: key?.body, responseHeaders: rateLimitHeaders(results, this.deps.clock.now()) };
    }
    // By network: an IPv6 client has a whole /64 to take a fresh address from per request.
    const checks: Array<[RateLimitRule, string]> = [[this.rules.ip, clientNetwork(clientIp(req, this.deps.config.TRUST_PROXY_HOPS))]];
    if (!PASSWORD_ROUTES.has(route.path)) {
      const results = await this.check(checks, false);
      return { identity: null, responseHeaders: rateLimitHeaders(results, this.deps.clock.now()) };
    }
    const body = await readBody(req, MAX_CREDENTIAL_BODY);
    const username = await usernameOf(req, body);
    if (username) checks.push([this.rules.password, username]);
    // Failing open here would let a Redis outage lift the brute-force limit.
    const results = await this.check(checks, true);
    return {
      identity: null,
      body,
      responseHeaders: rateLimitHeaders(results, this.deps.clock.now()),
      onStatus: async (status) => {
        // A correct password clears the username's failed attempts.
        if (status === 200 && username) await this.deps.limiter.clear(this.rules.password, username).catch(() => {});
      },
    };
  }

  /**
   * HTTP Basic (or an integration URL's `apiKey`), limited per client address once too many
   * attempts failed: while over the limit, the address gets 429 without its credentials being
   * checked, but for credentials verified within the auth cache's lifetime. Those cannot be a
   * guess, and they keep the other users of a shared address (an office's NAT, an IPv6 /64)
   * working while one client there retries a revoked key.
   */
  private async authenticate(req: FastifyRequest, apiKey: string | null) {
    const ip = clientNetwork(clientIp(req, this.deps.config.TRUST_PROXY_HOPS));
    const rule = this.rules.authFailures;
    if (this.deps.config.RATE_LIMITING_ENABLED) {
      const state = await this.deps.limiter.peek(rule, ip).catch(() => null);
      if (state && !state.allowed) {
        const known = await this.deps.authenticator.cachedIdentity(req.headers.authorization, apiKey);
        if (known) return known;
        throw rateLimited(state, rateLimitHeaders([state], this.deps.clock.now()));
      }
    }
    try {
      if (apiKey !== null) return await this.deps.authenticator.authenticateKey(apiKey, req.id);
      return await this.deps.authenticator.authenticate(req.headers.authorization, req.id);
    } catch (err) {
      // Only wrong credentials count; a request without any is not a guess.
      const guessed = apiKey !== null || req.headers.authorization !== undefined;
      if (err instanceof ApiError && err.status === 401 && guessed && this.deps.config.RATE_LIMITING_ENABLED) {
        await this.deps.limiter.hit(rule, ip).catch(() => null);
      }
      throw err;
    }
  }

  /** Counts the request against each rule in turn; the first one exhausted answers 429. */
  private async check(checks: Array<[RateLimitRule, string]>, failClosed: boolean): Promise<RateLimitResult[]> {
    if (!this.deps.config.RATE_LIMITING_ENABLED) return [];
    const results: RateLimitResult[] = [];
    for (const [rule, subject] of checks) {
      let result: RateLimitResult;
      try {
        result = await this.deps.limiter.hit(rule, subject);
      } catch (err) {
        this.deps.log.warn({ err: (err as Error).message, rule: rule.name }, "rate limiter unavailable");
        if (failClosed) throw serviceUnavailable();
        return results;
      }
      results.push(result);
      if (!result.allowed) throw rateLimited(result, rateLimitHeaders(results, this.deps.clock.now()));
    }
    return results;
  }
}

function rateLimited(result: RateLimitResult, headers: Record<string, string>): ApiError {
  const seconds = Math.max(result.retryAfterSeconds, 0.001);
  return new ApiError("RATE_LIMIT_HIT", "API usage exceeded rate limit", {
    extra: { "retry-after": seconds },
    headers: { ...headers, "Retry-After": String(seconds) },
  });
}

/** The `username` form field (urlencoded or multipart) or query parameter, normalized. */
async function usernameOf(req: FastifyRequest, body: Buffer): Promise<string | null> {
  let value = await formField(req, body, "username");
  if (value === null) {
    const q = (req.query as Record<string, unknown> | undefined)?.username;
    value = typeof q === "string" ? q : null;
  }
  const normalized = value?.trim().toLowerCase();
  return normalized ? normalized : null;
}

/**
 * An integration URL's `api_key`: the query string's, else, for a request without HTTP Basic
 * either, a form body's (the body is then read here, and passed on as read). A form is read for
 * the key only when it can be nowhere else: a request whose URL or header has credentials is
 * authenticated before anything of its body is read, and its body streams to the service.
 * Null: HTTP Basic as usual (or no credentials at all).
 */
async function webhookKey(req: FastifyRequest): Promise<{ apiKey: string | null; body?: Buffer }> {
  const q = (req.query as Record<string, unknown> | undefined)?.api_key;
  const fromQuery = Array.isArray(q) ? q[q.length - 1] : q;
  if (typeof fromQuery === "string") return { apiKey: fromQuery };
  if (req.headers.authorization !== undefined || !isFormPost(req)) return { apiKey: null };
  const body = await readBody(req, MAX_WEBHOOK_FORM_BODY);
  return { apiKey: await formField(req, body, "api_key"), body };
}

/** A text field of a urlencoded or multipart form body, or null (a malformed form has none). */
async function formField(req: FastifyRequest, body: Buffer, name: string): Promise<string | null> {
  const type = String(req.headers["content-type"] ?? "");
  if (type.toLowerCase().startsWith("application/x-www-form-urlencoded")) return new URLSearchParams(body.toString("utf8")).get(name);
  if (!type.toLowerCase().startsWith("multipart/form-data")) return null;
  // A parser, not a pattern over the raw body: one crafted for the pattern backtracked for
  // minutes, holding every request of the gateway, before anyone was authenticated.
  try {
    const value = (await new Response(body as unknown as BodyInit, { headers: { "content-type": type } }).formData()).get(name);
    return typeof value === "string" ? value : null;
  } catch {
    return null;
  }
}
