import { createHash } from "node:crypto";
import type { Redis } from "@chat/platform";
import { ensureRedisReady } from "../redis-ready";

/** What a successful credential check establishes (the client name is per request). */
export interface CachedIdentity {
  userId: number;
  realmId: number;
  /** The organization's subdomain (absent in entries cached before it was recorded: those count as misses). */
  realmStringId?: string;
  role: number;
  isBot: boolean;
  /** Absent in entries cached before it was recorded; those are not incoming-webhook bots' (see Gate). */
  botType?: number | null;
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

// Bumps the generation first, then drops every entry the index names, and tells every
// gateway's in-process copies (ARGV[1] is the channel: pub/sub channels are not prefixed).
const INVALIDATE = `
redis.call('INCR', KEYS[2])
local entries = redis.call('SMEMBERS', KEYS[1])
for _, key in ipairs(entries) do redis.call('DEL', key) end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], '1')
return #entries`;

/** In-process copies live at most this long (a safety net: invalidations drop them at once). */
const LOCAL_TTL_MS = 10_000;
/** More in-process copies than this start over (one per recently active API key). */
const LOCAL_MAX = 100_000;

/** The scripts as `defineCommand` adds them (keys first, then arguments). */
interface CacheCommands {
  gwAuthStore(...keysThenArgs: Array<string | number>): Promise<number>;
  gwAuthInvalidate(...keysThenArgs: string[]): Promise<number>;
}

/**
 * Successful credential checks, kept briefly in Redis under a hash of email and key (never the
 * key itself), indexed by user and by realm so that accounts' domain events can drop them.
 *
 * With a subscriber connection, checks found in Redis are also kept in process, so most
 * requests skip Redis: every invalidation (made by any gateway's consumer) is published, and each
 * gateway drops all its copies when it hears one, or when its subscriber reconnects (it may
 * have missed some). While the subscriber is not ready, the copies are not used.
 */
export class AuthCache {
  private readonly redis: Redis & CacheCommands;
  private readonly channel: string;
  private readonly local = new Map<string, { who: CachedIdentity; until: number }>();
  /** Counts invalidations heard: a Redis read that overlapped one is not copied. */
  private epoch = 0;
  /** Whether the subscription is confirmed, so in-process copies may be used. */
  private listening = false;

  constructor(
    redis: Redis,
    private readonly ttlSeconds: number,
    prefix: string,
    subscriber: Redis | null = null,
  ) {
    this.redis = redis as Redis & CacheCommands;
    this.channel = `${prefix}gw:auth:invalidated`;
    if (!("gwAuthStore" in redis)) {
      redis.defineCommand("gwAuthStore", { numberOfKeys: 4, lua: STORE });
      redis.defineCommand("gwAuthInvalidate", { numberOfKeys: 2, lua: INVALIDATE });
    }
    if (subscriber) {
      subscriber.on("message", (channel: string) => {
        if (channel === this.channel) this.forget();
      });
      // Invalidations published while the subscriber was away were missed: start over once
      // Redis confirms the subscription again.
      subscriber.on("close", () => {
        this.listening = false;
        this.forget();
      });
      subscriber.on("ready", () => this.listen(subscriber));
      if (subscriber.status === "ready") this.listen(subscriber);
    }
  }

  private listen(subscriber: Redis): void {
    subscriber.subscribe(this.channel).then(
      () => {
        this.forget();
        this.listening = subscriber.status === "ready";
      },
      () => {},
    );
  }

  private forget(): void {
    this.epoch++;
    this.local.clear();
  }

  private get localReady(): boolean {
    return this.listening && this.enabled;
  }

  private keepLocal(hash: string, who: CachedIdentity, epoch: number): void {
    if (!this.localReady || epoch !== this.epoch) return;
    if (this.local.size >= LOCAL_MAX) this.local.clear();
    this.local.set(hash, { who, until: Date.now() + Math.min(LOCAL_TTL_MS, this.ttlSeconds * 1000) });
  }

  static hash(email: string, apiKey: string): string {
    return createHash("sha256").update(email).update("\u0000").update(apiKey).digest("hex");
  }

  /**
   * A key checked without an email (an integration URL's `api_key`). Never equal to a `hash`:
   * that one's input ends with a well-formed key, this one's with a NUL.
   */
  static keyHash(apiKey: string): string {
    return createHash("sha256").update(apiKey).update("\u0000").digest("hex");
  }

  get enabled(): boolean {
    return this.ttlSeconds > 0;
  }

  async get(hash: string): Promise<CachedIdentity | null> {
    if (!this.enabled) return null;
    if (this.localReady) {
      const copy = this.local.get(hash);
      if (copy && copy.until > Date.now()) return copy.who;
    }
    ensureRedisReady(this.redis);
    const epoch = this.epoch;
    const raw = await this.redis.get(entryKey(hash));
    if (!raw) return null;
    const who = JSON.parse(raw) as CachedIdentity;
    if (who.realmStringId === undefined) return null;
    this.keepLocal(hash, who, epoch);
    return who;
  }

  /** Read before asking accounts; pass it to `store` so a concurrent invalidation wins. */
  async generation(): Promise<string> {
    ensureRedisReady(this.redis);
    return (await this.redis.get(GEN_KEY)) ?? "0";
  }

  async store(hash: string, who: CachedIdentity, generation: string): Promise<boolean> {
    if (!this.enabled) return false;
    ensureRedisReady(this.redis);
    const epoch = this.epoch;
    const stored = await this.redis.gwAuthStore(
      entryKey(hash),
      userIndexKey(who.realmId, who.userId),
      realmIndexKey(who.realmId),
      GEN_KEY,
      JSON.stringify(who),
      this.ttlSeconds,
      generation,
    );
    if (stored === 1) this.keepLocal(hash, who, epoch);
    return stored === 1;
  }

  async invalidateUser(realmId: number, userId: number): Promise<number> {
    return this.redis.gwAuthInvalidate(userIndexKey(realmId, userId), GEN_KEY, this.channel);
  }

  async invalidateRealm(realmId: number): Promise<number> {
    return this.redis.gwAuthInvalidate(realmIndexKey(realmId), GEN_KEY, this.channel);
  }
}
