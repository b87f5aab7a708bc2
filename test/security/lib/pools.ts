/**
 * Database pool size for the stacks of these suites. Several stacks run at once (one per test
 * worker, five services each) against one shared PostgreSQL whose `max_connections` is 100;
 * the default pool of 10 per service exhausted it. These suites need few connections.
 */
export const SMALL_POOLS = { DATABASE_POOL_SIZE: "4" } as const;
