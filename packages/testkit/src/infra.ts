import net from "node:net";

export interface InfraUrls {
  databaseUrl: string;
  redisUrl: string;
  amqpUrl: string;
}

const DEFAULTS: InfraUrls = {
  databaseUrl: "postgres://postgres@127.0.0.1:5432/postgres",
  redisUrl: "redis://127.0.0.1:6379",
  amqpUrl: "amqp://guest:guest@127.0.0.1:5672",
};

/** The commands that start each local server on our machines. */
export const START_COMMANDS = {
  postgres: "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
  redis: 'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no',
  rabbitmq: "rabbitmq-server -detached",
} as const;

export function portOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return endpointOpen({ host, port }, timeoutMs);
}

/** Whether something accepts connections there: a TCP host and port, or a Unix socket's `path`. */
export function endpointOpen(where: net.NetConnectOpts, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(where);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

export function hostPort(url: string, defaultPort: number): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || defaultPort) };
}

/** Which of PostgreSQL, Redis and RabbitMQ do not answer at their URLs. */
export async function unreachable(urls: InfraUrls): Promise<Array<keyof typeof START_COMMANDS>> {
  const checks = [
    ["postgres", hostPort(urls.databaseUrl, 5432)],
    ["redis", hostPort(urls.redisUrl, 6379)],
    ["rabbitmq", hostPort(urls.amqpUrl, 5672)],
  ] as const;
  const results = await Promise.all(checks.map(async ([name, hp]) => [name, await portOpen(hp.host, hp.port)] as const));
  return results.filter(([, ok]) => !ok).map(([name]) => name);
}

/** Containers this process started (testcontainers), stopped by `stopContainers()`. */
const started: Array<{ stop(): Promise<unknown> }> = [];

/**
 * Infrastructure for tests. `TESTKIT_INFRA` picks the source:
 * - `auto` (default): the servers named by TEST_DATABASE_URL or DATABASE_URL / REDIS_URL /
 *   AMQP_URL (or the standard local ports) when they answer - our machines and CI - and
 *   containers for whichever does not, when a container runtime is there;
 * - `containers`: fresh containers for all three (needs a container runtime);
 * - `local`: the local servers only; fails, naming what to start, if one does not answer.
 */
export async function resolveInfra(): Promise<InfraUrls> {
  const urls: InfraUrls = {
    databaseUrl: process.env.TEST_DATABASE_URL ?? adminUrl(process.env.DATABASE_URL) ?? DEFAULTS.databaseUrl,
    redisUrl: process.env.REDIS_URL ?? DEFAULTS.redisUrl,
    amqpUrl: process.env.AMQP_URL ?? DEFAULTS.amqpUrl,
  };
  const mode = process.env.TESTKIT_INFRA ?? "auto";
  if (mode === "containers") return startContainers(urls, ["postgres", "redis", "rabbitmq"]);
  const missing = await unreachable(urls);
  if (missing.length === 0) return urls;
  if (mode === "local") throw new Error(notReachable(missing));
  return startContainers(urls, missing);
}

/** Tests create their own databases; they connect to the server's maintenance database. */
function adminUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const u = new URL(url);
  u.pathname = "/postgres";
  return u.toString();
}

function notReachable(missing: string[]): string {
  const how = missing.map((m) => `  ${m}: ${START_COMMANDS[m as keyof typeof START_COMMANDS]}`).join("\n");
  return `Not reachable: ${missing.join(", ")}.\nStart them with:\n${how}`;
}

async function startContainers(urls: InfraUrls, missing: string[]): Promise<InfraUrls> {
  const tc = await import("testcontainers");
  try {
    await tc.getContainerRuntimeClient();
  } catch {
    throw new Error(`${notReachable(missing)}\n(No container runtime either, so testcontainers cannot start them.)`);
  }
  const out = { ...urls };
  if (missing.includes("postgres")) {
    const c = await new tc.GenericContainer("postgres:16-alpine")
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust" })
      .withExposedPorts(5432)
      .withWaitStrategy(tc.Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    started.push(c);
    out.databaseUrl = `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`;
  }
  if (missing.includes("redis")) {
    const c = await new tc.GenericContainer("redis:7-alpine").withExposedPorts(6379).start();
    started.push(c);
    out.redisUrl = `redis://${c.getHost()}:${c.getMappedPort(6379)}`;
  }
  if (missing.includes("rabbitmq")) {
    const c = await new tc.GenericContainer("rabbitmq:3.13-alpine")
      .withExposedPorts(5672)
      .withWaitStrategy(tc.Wait.forLogMessage(/Server startup complete/))
      .start();
    started.push(c);
    out.amqpUrl = `amqp://guest:guest@${c.getHost()}:${c.getMappedPort(5672)}`;
  }
  return out;
}

/** Stops every container `resolveInfra()` started (the vitest global teardown calls it). */
export async function stopContainers(): Promise<void> {
  await Promise.all(started.splice(0).map((c) => c.stop().catch(() => {})));
}
