import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { freePort, startStack, STACK_SERVICES, type StackService } from "@chat/testkit";
import { Inspector } from "./inspector";
import { pidForPort } from "./procs";

/** The system under test: our own stack, or one already running (`--url`). */
export interface Target {
  gatewayUrl: string;
  urls: Record<StackService, string>;
  /** INTERNAL_TOKEN, DATABASE_URL, REDIS_URL, REDIS_PREFIX, AMQP_URL, ... */
  vars: Record<string, string>;
  /** Process ids by service (null when not found: a remote stack). */
  pids(): Record<StackService, number | null>;
  /** Whether this run started the stack. */
  owned: boolean;
  /** Forces a full GC in a service, when this run started it with an inspector; else null. */
  gc(service: StackService): Promise<void> | null;
  /** Starts CPU profiles of every service (with `--profile`; otherwise does nothing). */
  profileStart(): Promise<void>;
  /** Stops them and writes `<dir>/<label>-<service>.cpuprofile`; returns the files. */
  profileStop(label: string): Promise<string[]>;
  stop(): Promise<void>;
}

/** Settings for a measuring run: production-like, no per-response validation, no rate limits. */
export const BENCH_ENV: Record<string, string> = {
  NODE_ENV: "production",
  VALIDATE_RESPONSES: "false",
  RATE_LIMITING_ENABLED: "false",
  RATE_LIMIT_USER_MAX: "100000000",
  LOG_LEVEL: "warn",
  // Held polls must still be held when a scenario wakes them: settling 10,000 of them can take
  // longer than the default heartbeat (45-55 s) while a profiler runs.
  EVENTS_HEARTBEAT_SECONDS: "300",
  // Runs of events travel as one broker message (docs/operating.md: on once every pod reads them).
  AMQP_PUBLISH_BATCHES: "true",
};

export interface StartOptions {
  /** Record V8 CPU profiles of the measured windows into this directory. */
  profileDir?: string;
  /** Only these services are profiled (default: all five); the others run without the profiler's cost. */
  profileServices?: StackService[];
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<StackService, Record<string, string>>>;
  /**
   * The services reach PostgreSQL through its Unix socket in this directory (`--pg-socket`), as
   * a deployment with PostgreSQL on the same host would; the bench's own connections (setup,
   * calibration) stay on TCP.
   */
  pgSocketDir?: string;
}

/**
 * The same database over a Unix socket: `postgresql://user@%2Fvar%2Frun%2Fpostgresql:5432/db`
 * (pg and libpq read a host that starts with "/" as a socket directory; the port names the
 * socket file).
 */
export function socketDatabaseUrl(databaseUrl: string, dir: string): string {
  const u = new URL(databaseUrl);
  const user = u.username ? `${u.username}${u.password ? `:${u.password}` : ""}@` : "";
  return `${u.protocol}//${user}${encodeURIComponent(dir)}${u.port ? `:${u.port}` : ""}${u.pathname}${u.search}`;
}

export async function startTarget(opts: StartOptions = {}): Promise<Target> {
  // The events service always gets an inspector (memory readings after a forced GC); with
  // --profile every service does. An idle inspector costs nothing measurable.
  const profiled: StackService[] = opts.profileDir ? (opts.profileServices ?? [...STACK_SERVICES]) : [];
  const inspected: StackService[] = [...new Set<StackService>(["events", ...profiled])];
  const inspectPorts: Partial<Record<StackService, number>> = {};
  const serviceEnv: Partial<Record<StackService, Record<string, string>>> = { ...opts.serviceEnv };
  // Extra Node flags for every service, or for one (BENCH_NODE_OPTIONS_GATEWAY, ...), as a
  // deployment's NODE_OPTIONS would set them.
  const nodeOptions = (s: StackService) => [process.env.BENCH_NODE_OPTIONS, process.env[`BENCH_NODE_OPTIONS_${s.toUpperCase()}`]].filter(Boolean).join(" ");
  for (const s of STACK_SERVICES) if (nodeOptions(s)) serviceEnv[s] = { ...serviceEnv[s], NODE_OPTIONS: nodeOptions(s) };
  for (const s of inspected) {
    inspectPorts[s] = await freePort();
    serviceEnv[s] = { ...serviceEnv[s], NODE_OPTIONS: `${nodeOptions(s)} --inspect=127.0.0.1:${inspectPorts[s]}`.trim() };
  }
  const stack = await startStack({
    env: { ...BENCH_ENV, ...opts.env },
    serviceEnv: opts.pgSocketDir
      ? Object.fromEntries(STACK_SERVICES.map((s) => [s, (v: Record<string, string>) => ({ ...serviceEnv[s], DATABASE_URL: socketDatabaseUrl(v.DATABASE_URL, opts.pgSocketDir!) })]))
      : serviceEnv,
    readyTimeoutMs: 120_000,
  });
  const inspectors = new Map<StackService, Promise<Inspector>>();
  const inspector = (s: StackService): Promise<Inspector> | null => {
    const port = inspectPorts[s];
    if (port === undefined) return null;
    let i = inspectors.get(s);
    if (!i) {
      i = Inspector.connect(port);
      inspectors.set(s, i);
    }
    return i;
  };
  return {
    gatewayUrl: stack.baseUrl,
    urls: stack.urls,
    vars: stack.vars,
    owned: true,
    gc: (s) => inspector(s)?.then((i) => i.collectGarbage()) ?? null,
    async profileStart() {
      await Promise.all(profiled.map(async (s) => (await inspector(s)!).startProfile()));
    },
    async profileStop(label) {
      if (!opts.profileDir) return [];
      mkdirSync(opts.profileDir, { recursive: true });
      return Promise.all(
        profiled.map(async (s) => {
          const profile = await (await inspector(s)!).stopProfile();
          const file = path.join(opts.profileDir!, `${label}-${s}.cpuprofile`);
          writeFileSync(file, JSON.stringify(profile));
          return file;
        }),
      );
    },
    pids: () => Object.fromEntries(STACK_SERVICES.map((s) => [s, pidForPort(stack.ports[s])])) as Record<StackService, number | null>,
    stop: async () => {
      for (const i of inspectors.values()) await i.then((x) => x.close()).catch(() => {});
      await stack.stop();
    },
  };
}

/**
 * A stack that is already running: the gateway URL plus, from the environment, the internal
 * URLs and token (setup creates organizations through accounts' internal routes) and the
 * database (the history scenario bulk-loads messages).
 */
export function remoteTarget(gatewayUrl: string, env: Record<string, string | undefined> = process.env): Target {
  const need = (name: string) => {
    const v = env[name];
    if (!v) throw new Error(`--url needs ${name} in the environment`);
    return v;
  };
  const urls = {
    gateway: gatewayUrl,
    accounts: need("ACCOUNTS_URL"),
    messaging: need("MESSAGING_URL"),
    events: need("EVENTS_URL"),
    scheduler: env.SCHEDULER_URL ?? "http://127.0.0.1:9995",
  };
  const vars: Record<string, string> = {
    INTERNAL_TOKEN: need("INTERNAL_TOKEN"),
    DATABASE_URL: need("DATABASE_URL"),
    REDIS_URL: env.REDIS_URL ?? "redis://127.0.0.1:6379",
    REDIS_PREFIX: env.REDIS_PREFIX ?? "",
    AMQP_URL: env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672",
    AMQP_QUEUE_PREFIX: env.AMQP_QUEUE_PREFIX ?? "",
  };
  const local = (u: string) => /^(127\.|localhost|\[::1\])/.test(new URL(u).hostname);
  return {
    gatewayUrl,
    urls,
    vars,
    owned: false,
    gc: () => null,
    profileStart: async () => {},
    profileStop: async () => [],
    pids: () =>
      Object.fromEntries(
        STACK_SERVICES.map((s) => [s, local(urls[s]) ? pidForPort(Number(new URL(urls[s]).port) || 80) : null]),
      ) as Record<StackService, number | null>,
    stop: async () => {},
  };
}
