import { randomUUID, timingSafeEqual } from "node:crypto";

/** Headers the gateway sets on internal hops. Any client-sent copies are stripped at the edge. */
export const INTERNAL_HEADERS = {
  token: "x-chat-internal-token",
  userId: "x-chat-user-id",
  realmId: "x-chat-realm-id",
  role: "x-chat-role",
  isBot: "x-chat-is-bot",
  email: "x-chat-email",
  client: "x-chat-client",
  requestId: "x-request-id",
  /** The client asked for an upload under `/api/v1` rather than at the root (a temporary URL, not the file). */
  apiForm: "x-chat-api-form",
  /** The organization subdomain the request's host names (see `subdomainOfHost`); absent on the deployment's own host. */
  subdomain: "x-chat-subdomain",
  /** The client's address as the gateway counts it (behind TRUST_PROXY_HOPS trusted proxies), for per-IP limits. */
  clientIp: "x-chat-client-ip",
} as const;

export const ROLES = { owner: 100, administrator: 200, moderator: 300, member: 400, guest: 600 } as const;
export type Role = (typeof ROLES)[keyof typeof ROLES];

/** The authenticated caller, as the gateway established it. */
export interface Identity {
  userId: number;
  realmId: number;
  role: Role;
  isBot: boolean;
  email: string;
  /** Client name (from the `client` param or User-Agent), for `read_by_sender`'s default. */
  client: string;
}

export const isAdmin = (who: Pick<Identity, "role">) => who.role <= ROLES.administrator;
export const isGuest = (who: Pick<Identity, "role">) => who.role === ROLES.guest;

export function identityHeaders(who: Identity, token: string): Record<string, string> {
  return {
    [INTERNAL_HEADERS.token]: token,
    [INTERNAL_HEADERS.userId]: String(who.userId),
    [INTERNAL_HEADERS.realmId]: String(who.realmId),
    [INTERNAL_HEADERS.role]: String(who.role),
    [INTERNAL_HEADERS.isBot]: who.isBot ? "1" : "0",
    [INTERNAL_HEADERS.email]: encodeURIComponent(who.email),
    [INTERNAL_HEADERS.client]: encodeURIComponent(who.client),
  };
}

/** Reads the identity headers; null when the request carries none (unauthenticated routes). */
export function readIdentity(headers: Record<string, string | string[] | undefined>): Identity | null {
  const get = (h: string) => {
    const v = headers[h];
    return Array.isArray(v) ? v[0] : v;
  };
  const userId = Number(get(INTERNAL_HEADERS.userId));
  const realmId = Number(get(INTERNAL_HEADERS.realmId));
  const role = Number(get(INTERNAL_HEADERS.role));
  if (!Number.isSafeInteger(userId) || !Number.isSafeInteger(realmId) || !userId || !realmId) return null;
  if (!Object.values(ROLES).includes(role as Role)) return null;
  return {
    userId,
    realmId,
    role: role as Role,
    isBot: get(INTERNAL_HEADERS.isBot) === "1",
    email: safeDecode(get(INTERNAL_HEADERS.email) ?? ""),
    client: safeDecode(get(INTERNAL_HEADERS.client) ?? "Unspecified"),
  };
}

/** The organization subdomain the gateway found in the request's host, or null. */
export function readSubdomain(headers: Record<string, string | string[] | undefined>): string | null {
  const v = headers[INTERNAL_HEADERS.subdomain];
  const s = Array.isArray(v) ? v[0] : v;
  return s ? s : null;
}

/** The client's address the gateway passed on, or null (a request that did not come through it). */
export function readClientIp(headers: Record<string, string | string[] | undefined>): string | null {
  const v = headers[INTERNAL_HEADERS.clientIp];
  const s = Array.isArray(v) ? v[0] : v;
  return s ? s : null;
}

/** A malformed escape must not turn into a 500; the raw text is the best we have. */
function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

export function tokenMatches(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A random UUID as one flat string. Node builds `randomUUID()` by concatenating its parts, and
 * V8 keeps that as a tree of about twenty string objects for as long as the id is held (2 KB
 * per id; a held poll holds two).
 */
export function flatUuid(): string {
  return Buffer.from(randomUUID(), "latin1").toString("latin1");
}
