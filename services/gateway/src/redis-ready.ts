import type { Redis } from "@chat/platform";

/**
 * Fails at once while Redis is unreachable, instead of queueing the command through reconnect
 * attempts: a cache miss or a skipped limit costs less than a request stalled for seconds.
 */
export function ensureRedisReady(redis: Redis): void {
  if (redis.status !== "ready") throw new Error(`redis is ${redis.status}`);
}
