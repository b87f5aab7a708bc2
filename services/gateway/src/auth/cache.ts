import { createHash } from "node:crypto";
import type { Redis } from "@chat/platform";
import { ensureRedisReady } from "../redis-ready";

/** What a successful credential check establishes (the client name is per request). */
export interface CachedIdentity {
  userId: number;
  realmId: number;
  role: number;
  isBot: boolean;
  email: string;
}

const GEN_KEY = "gw:auth:gen";
const entryKey = (hash: string) => `gw:auth:entry:${hash}`;
const userIndexKey = (realmId: number, userId: number) => `gw:auth:user:${realmId}:${userId}`;
const realmIndexKey = (realmId: number) => `gw:auth:realm:${realmId}`;

// Stores an entry only if no invalidation happened since the caller read the generation, so a
// check that raced with a key reset or deactivation never caches the stale answer.
const STORE = `
if (redis.call('GET', KEYS[4]) or '0') ~= ARGV[3] then return 0 end
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)
for i = 2, 3 do
  redis.call('SADD', KEYS[i], KEYS[1])
  if redis.call('TTL', KEYS[i]) < ttl then redis.call('EXPIRE', KEYS[i], ttl) end
end
return 1`;

// Bumps the generation first, then drops every entry the index names.
const INVALIDATE = `
redis.call('INCR', KEYS[2])
local entries = redis.call('SMEMBERS', KEYS[1])
for _, key in ipairs(entries) do redis.call('DEL', key) end
redis.call('DEL', KEYS[1])
return #entries`;

/** The scripts as `defineCommand` adds them (keys first, then arguments). */
interface CacheCommands {
  gwAuthStore(...keysThenArgs: Array<string | number>): Promise<number>;
  gwAuthInvalidate(...keys: string[]): Promise<number>;
}

/**
 * Successful credential checks, kept briefly in Redis under a hash of email and key (never the
 * key itself), indexed by user and by realm so that accounts' domain events can drop them.
 */
export class AuthCache {
  private readonly redis: Redis & CacheCommands;

  constructor(
    redis: Redis,
    private readonly ttlSeconds: number,
  ) {
    this.redis = redis as Redis & CacheCommands;
    if (!("gwAuthStore" in redis)) {
      redis.defineCommand("gwAuthStore", { numberOfKeys: 4, lua: STORE });
      redis.defineCommand("gwAuthInvalidate", { numberOfKeys: 2, lua: INVALIDATE });
    }
  }

  static hash(email: string, apiKey: string): string {
    return createHash("sha256").update(email).update("\u0000").update(apiKey).digest("hex");
  }

  get enabled(): boolean {
    return this.ttlSeconds > 0;
  }

  async get(hash: string): Promise<CachedIdentity | null> {
    if (!this.enabled) return null;
    ensureRedisReady(this.redis);
    const raw = await this.redis.get(entryKey(hash));
    return raw ? (JSON.parse(raw) as CachedIdentity) : null;
  }

  /** Read before asking accounts; pass it to `store` so a concurrent invalidation wins. */
  async generation(): Promise<string> {
    ensureRedisReady(this.redis);
    return (await this.redis.get(GEN_KEY)) ?? "0";
  }

  async store(hash: string, who: CachedIdentity, generation: string): Promise<boolean> {
    if (!this.enabled) return false;
    ensureRedisReady(this.redis);
    const stored = await this.redis.gwAuthStore(
      entryKey(hash),
      userIndexKey(who.realmId, who.userId),
      realmIndexKey(who.realmId),
      GEN_KEY,
      JSON.stringify(who),
      this.ttlSeconds,
      generation,
    );
    return stored === 1;
  }

  async invalidateUser(realmId: number, userId: number): Promise<number> {
    return this.redis.gwAuthInvalidate(userIndexKey(realmId, userId), GEN_KEY);
  }

  async invalidateRealm(realmId: number): Promise<number> {
    return this.redis.gwAuthInvalidate(realmIndexKey(realmId), GEN_KEY);
  }
}
