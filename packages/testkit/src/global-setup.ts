import { pruneTemplates } from "./env";
import { resolveInfra, stopContainers } from "./infra";

/**
 * Once per vitest run: find (or start) PostgreSQL, Redis and RabbitMQ and hand their URLs to
 * the test workers through the environment. Returns the teardown that stops any containers.
 */
export default async function setup(project: { provide?: (key: string, value: unknown) => void }) {
  const infra = await resolveInfra();
  process.env.TEST_DATABASE_URL = infra.databaseUrl;
  process.env.REDIS_URL = infra.redisUrl;
  process.env.AMQP_URL = infra.amqpUrl;
  await pruneTemplates(infra.databaseUrl);
  project?.provide?.("infra", infra);
  return async () => {
    await stopContainers();
  };
}
