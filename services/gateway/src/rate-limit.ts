import type { Clock, Redis } from "@chat/platform";
import { ensureRedisReady } from "./redis-ready";

export interface RateLimitRule {
  /** Names the bucket family: `user`, `ip`, `auth`. */
  name: string;
  max: number;
  windowSeconds: number;
}

export interface RateLimitResult {
  allowed: boolean;
  max: number;
  remaining: number;
  /** Seconds until a request is allowed again (the oldest counted one leaves the window). */
  retryAfterSeconds: number;
  /** Seconds until the whole window is free again (the newest counted one leaves it). */
  resetSeconds: number;
}

// A sliding-window log: the times of the last `max` counted requests, newest first. Checking and
// recording happen in one script, so concurrent requests can never exceed the limit together.
const HIT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
while true do
  local oldest = redis.call('LINDEX', KEYS[1], -1)
  if oldest and tonumber(oldest) <= now - window then redis.call('RPOP', KEYS[1]) else break end
end
local count = redis.call('LLEN', KEYS[1])
local allowed = 0
if count < max then
  redis.call('LPUSH', KEYS[1], ARGV[1])
  redis.call('LTRIM', KEYS[1], 0, max - 1)
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
  allowed = 1
end
local oldest = tonumber(redis.call('LINDEX', KEYS[1], -1))
local newest = tonumber(redis.call('LINDEX', KEYS[1], 0))
return {allowed, max - count, oldest + window - now, newest + window - now}`;

// Counts the requests still inside the window without recording one: {count, ms until the oldest leaves}.
const PEEK = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local count = 0
local oldest = nil
for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local t = tonumber(v)
  if t > now - window then count = count + 1; oldest = t end
end
return {count, oldest and (oldest + window - now) or 0}`;

interface LimiterCommands {
  gwRateHit(key: string, now: number, windowMs: number, max: number): Promise<[number, number, number, number]>;
  gwRatePeek(key: string, now: number, windowMs: number): Promise<[number, number]>;
}

/** Redis-backed limits shared by every gateway replica. Times come from the injected clock. */
export class RateLimiter {
  private readonly redis: Redis & LimiterCommands;

  constructor(
    redis: Redis,
    private readonly clock: Clock,
  ) {
    this.redis = redis as Redis & LimiterCommands;
    if (!("gwRateHit" in redis)) redis.defineCommand("gwRateHit", { numberOfKeys: 1, lua: HIT });
    if (!("gwRatePeek" in redis)) redis.defineCommand("gwRatePeek", { numberOfKeys: 1, lua: PEEK });
  }

  private key(rule: RateLimitRule, subject: string): string {
    return `gw:rl:${rule.name}:${subject}`;
  }

  /** Counts one request against `rule` for `subject` unless the limit is already reached. */
  async hit(rule: RateLimitRule, subject: string): Promise<RateLimitResult> {
    ensureRedisReady(this.redis);
    const windowMs = rule.windowSeconds * 1000;
    const now = this.clock.now().getTime();
    const [allowed, remaining, retryMs, resetMs] = await this.redis.gwRateHit(this.key(rule, subject), now, windowMs, rule.max);
    return {
      allowed: allowed === 1,
      max: rule.max,
      remaining: Math.max(0, remaining),
      retryAfterSeconds: allowed === 1 ? 0 : Math.max(0, retryMs) / 1000,
      resetSeconds: Math.max(0, resetMs) / 1000,
    };
  }

  /** Whether `subject` is over `rule` right now, without counting a request. */
  async peek(rule: RateLimitRule, subject: string): Promise<RateLimitResult> {
    ensureRedisReady(this.redis);
    const windowMs = rule.windowSeconds * 1000;
    const [count, retryMs] = await this.redis.gwRatePeek(this.key(rule, subject), this.clock.now().getTime(), windowMs);
    const allowed = count < rule.max;
    return {
      allowed,
      max: rule.max,
      remaining: Math.max(0, rule.max - count),
      retryAfterSeconds: allowed ? 0 : Math.max(0, retryMs) / 1000,
      resetSeconds: Math.max(0, retryMs) / 1000,
    };
  }

  /** Forgets a subject's history (a successful login clears its failed attempts). */
  async clear(rule: RateLimitRule, subject: string): Promise<void> {
    await this.redis.del(this.key(rule, subject));
  }
}

/**
 * The `X-RateLimit-*` headers for the rules a request was checked against: the smallest limit
 * and remaining count, and the latest reset time as Unix seconds.
 */
export function rateLimitHeaders(results: RateLimitResult[], now: Date): Record<string, string> {
  if (results.length === 0) return {};
  const limit = Math.min(...results.map((r) => r.max));
  const remaining = Math.min(...results.map((r) => r.remaining));
  const reset = Math.floor(now.getTime() / 1000 + Math.max(...results.map((r) => r.resetSeconds)));
  return { "X-RateLimit-Limit": String(limit), "X-RateLimit-Remaining": String(remaining), "X-RateLimit-Reset": String(reset) };
}
