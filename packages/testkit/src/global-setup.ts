import { resolveInfra } from "./infra";

/** Once per vitest run: find (or start) PostgreSQL, Redis and RabbitMQ and share their URLs. */
export default async function setup({ provide }: { provide: (key: string, value: unknown) => void }) {
  const infra = await resolveInfra();
  process.env.TEST_DATABASE_URL = infra.databaseUrl;
  process.env.REDIS_URL = infra.redisUrl;
  process.env.AMQP_URL = infra.amqpUrl;
  provide("infra", infra);
}
