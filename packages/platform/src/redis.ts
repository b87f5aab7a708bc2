import { Redis } from "ioredis";

export { Redis };

/** A Redis client whose every key carries the deployment's prefix (`REDIS_PREFIX`). */
export function createRedis(url: string, keyPrefix: string, opts: { lazy?: boolean } = {}): Redis {
  const redis = new Redis(url, {
    keyPrefix,
    lazyConnect: opts.lazy ?? false,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  // Connection errors surface on commands; do not crash the process on the event.
  redis.on("error", () => {});
  return redis;
}
