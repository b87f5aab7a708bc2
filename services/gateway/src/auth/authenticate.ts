import type { ErrorCode } from "@chat/contracts";
import { ApiError, InternalClient, unauthorized, type Logger } from "@chat/platform";
import { AuthCache, type CachedIdentity } from "./cache";
import { API_KEY_FORMAT, INVALID_API_KEY, MALFORMED_API_KEY, parseBasicAuth } from "./basic";

interface AuthenticateResponse {
  user_id: number;
  realm_id: number;
  realm_string_id: string;
  role: number;
  is_bot: boolean;
  bot_type: number | null;
  email: string;
}

/** Zulip's codes for the ways an integration URL's key can be wrong (accounts' messages). */
const KEY_FAILURE_CODES: Record<string, ErrorCode> = {
  [INVALID_API_KEY]: "INVALID_API_KEY",
  [MALFORMED_API_KEY]: "INVALID_API_KEY",
  "Account is deactivated": "USER_DEACTIVATED",
  "This organization has been deactivated": "REALM_DEACTIVATED",
};

/**
 * HTTP Basic authentication (or an integration URL's key) against accounts'
 * `POST /internal/authenticate`, with a short cache.
 * Every failure is a 401 UNAUTHORIZED carrying accounts' reason, except an unreachable accounts
 * service (503): a client must not be told its key is wrong when it is not.
 */
export class Authenticator {
  constructor(
    private readonly accounts: InternalClient,
    private readonly cache: AuthCache,
    private readonly log: Logger,
  ) {}

  async authenticate(header: string | undefined, requestId: string): Promise<CachedIdentity> {
    const { email, apiKey } = parseBasicAuth(header);
    return this.check(AuthCache.hash(email, apiKey), { email, api_key: apiKey }, requestId);
  }

  /**
   * An integration URL's `api_key`, without an email: the key names its user. Failures keep
   * Zulip's own codes (INVALID_API_KEY, USER_DEACTIVATED, ...): only its Basic-auth views turn
   * them into UNAUTHORIZED, and webhook views are not such views.
   */
  async authenticateKey(rawKey: string, requestId: string): Promise<CachedIdentity> {
    const apiKey = rawKey.trim();
    try {
      if (!API_KEY_FORMAT.test(apiKey)) throw unauthorized(MALFORMED_API_KEY);
      return await this.check(AuthCache.keyHash(apiKey), { api_key: apiKey }, requestId);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401) throw err;
      throw new ApiError(KEY_FAILURE_CODES[err.message] ?? "UNAUTHORIZED", err.message, { status: 401, headers: err.headers });
    }
  }

  /**
   * The identity of credentials verified within the cache's lifetime, without asking accounts;
   * null when they are not cached (or unreadable). Lets a client that just succeeded through while
   * its network is held back for others' failures (see Gate).
   */
  async cachedIdentity(header: string | undefined, rawKey: string | null): Promise<CachedIdentity | null> {
    let hash: string;
    if (rawKey !== null) hash = AuthCache.keyHash(rawKey.trim());
    else {
      try {
        const { email, apiKey } = parseBasicAuth(header);
        hash = AuthCache.hash(email, apiKey);
      } catch {
        return null;
      }
    }
    return this.cache.get(hash).catch((err) => this.cacheFailed(err));
  }

  private async check(hash: string, params: { email?: string; api_key: string }, requestId: string): Promise<CachedIdentity> {
    const cached = await this.cache.get(hash).catch((err) => this.cacheFailed(err));
    if (cached) return cached;
    const generation = await this.cache.generation().catch((err) => this.cacheFailed(err));

    let data: AuthenticateResponse;
    try {
      data = await this.accounts.call<AuthenticateResponse>("POST", "/internal/authenticate", { params, requestId });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) throw unauthorized(err.message);
      if (err instanceof ApiError && err.status < 500) throw unauthorized(INVALID_API_KEY);
      throw err;
    }
    const who: CachedIdentity = {
      userId: data.user_id,
      realmId: data.realm_id,
      realmStringId: data.realm_string_id,
      role: data.role,
      isBot: data.is_bot,
      botType: data.bot_type,
      email: data.email,
    };
    if (generation !== null) await this.cache.store(hash, who, generation).catch((err) => this.cacheFailed(err));
    return who;
  }

  /** Redis trouble only costs the cache: every request then asks accounts. */
  private cacheFailed(err: unknown): null {
    this.log.warn({ err: (err as Error).message }, "auth cache unavailable");
    return null;
  }
}
