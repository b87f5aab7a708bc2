import { z } from "zod";
import { baseConfigShape, envBool, loadConfig, organizationHostsShape, SERVICE_PORTS } from "@chat/platform";

const positiveInt = (def: number) => z.coerce.number().int().positive().default(def);

/** The gateway's environment: the base shape plus rate limits, the auth cache and proxy timeouts. */
export const gatewayConfigShape = {
  ...baseConfigShape,
  PORT: z.coerce.number().int().min(0).max(65535).default(SERVICE_PORTS.gateway),
  /**
   * The public URL clients reach, as accounts has it: with `ORGANIZATION_SUBDOMAINS`, a request
   * whose host is `<string_id>.` this URL's host is for that organization only.
   */
  EXTERNAL_URL: z.string().url().default(`http://127.0.0.1:${SERVICE_PORTS.gateway}`),
  ...organizationHostsShape,
  /** Turns every limiter off (load tests); on by default as in Zulip. */
  RATE_LIMITING_ENABLED: envBool(true),
  /** Per authenticated user: requests per window (Zulip's `api_by_user`). */
  RATE_LIMIT_USER_MAX: positiveInt(200),
  RATE_LIMIT_USER_WINDOW_SECONDS: positiveInt(60),
  /** Per client on routes without authentication (Zulip's `api_by_ip`): an IPv4 address, an IPv6 /64 network. */
  RATE_LIMIT_IP_MAX: positiveInt(100),
  RATE_LIMIT_IP_WINDOW_SECONDS: positiveInt(60),
  /** Attempts of `POST /fetch_api_key` per username (Zulip's `authenticate_by_username`). */
  RATE_LIMIT_AUTH_MAX: positiveInt(5),
  RATE_LIMIT_AUTH_WINDOW_SECONDS: positiveInt(1800),
  /** How long a successful credential check is reused (in Redis; each gateway also keeps copies in process for at most 10 s); domain events drop both sooner. */
  AUTH_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).default(60),
  /** Longest wait for an upstream's response headers, and between two body chunks. */
  UPSTREAM_TIMEOUT_SECONDS: positiveInt(300),
  /** Longest wait to open a connection to an upstream before answering 503. */
  UPSTREAM_CONNECT_TIMEOUT_MS: positiveInt(3000),
  /**
   * Held long polls go to the events service as HTTP/2 streams over this many connections (per
   * gateway process), instead of a connection each; 0 sends them over HTTP/1.1 like the rest.
   */
  EVENTS_HTTP2_CONNECTIONS: z.coerce.number().int().min(0).default(4),
  /** Each of those connections is replaced after this long, so polls spread over events instances added since. */
  EVENTS_HTTP2_MAX_AGE_SECONDS: positiveInt(300),
  /**
   * Compress large JSON answers (brotli, gzip or deflate) for clients that accept it, as Zulip's
   * nginx does: register's state is hundreds of kilobytes in a large organization. Turn off when
   * a proxy in front compresses already.
   */
  COMPRESS_RESPONSES: envBool(true),
  /** Smallest JSON answer compressed, in bytes (poll answers and most calls are far below). */
  COMPRESS_MIN_BYTES: z.coerce.number().int().min(0).default(16 * 1024),
  /**
   * Proxies in front of the gateway whose X-Forwarded-For entries are trusted (0 = use the peer).
   * The client address found so is what every per-IP limit counts, accounts' mails a day per
   * address included: behind a proxy, set it, or all clients count as that proxy.
   */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).default(0),
};

export type GatewayConfig = z.infer<z.ZodObject<typeof gatewayConfigShape>>;

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  return loadConfig(gatewayConfigShape, env);
}
