import { mkdirSync } from "node:fs";
import path from "node:path";
import { startStack, STACK_SERVICES, type StackService } from "@chat/testkit";
import { pidForPort } from "./procs";

/** The system under test: our own stack, or one already running (`--url`). */
export interface Target {
  gatewayUrl: string;
  urls: Record<StackService, string>;
  /** INTERNAL_TOKEN, DATABASE_URL, REDIS_URL, REDIS_PREFIX, AMQP_URL, ... */
  vars: Record<string, string>;
  /** Process ids by service (null when not found: a remote stack). */
  pids(): Record<StackService, number | null>;
  /** Whether this run started the stack (and so may restart it). */
  owned: boolean;
  stop(): Promise<void>;
}

/** Settings for a measuring run: production-like, no per-response validation, no rate limits. */
export const BENCH_ENV: Record<string, string> = {
  NODE_ENV: "production",
  VALIDATE_RESPONSES: "false",
  RATE_LIMITING_ENABLED: "false",
  RATE_LIMIT_USER_MAX: "100000000",
  LOG_LEVEL: "warn",
};

export interface StartOptions {
  /** Write V8 CPU profiles of every service into this directory (`--cpu-prof`). */
  profileDir?: string;
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<StackService, Record<string, string>>>;
}

export async function startTarget(opts: StartOptions = {}): Promise<Target> {
  const serviceEnv: Partial<Record<StackService, Record<string, string>>> = { ...opts.serviceEnv };
  if (opts.profileDir) {
    for (const s of STACK_SERVICES) {
      const dir = path.join(opts.profileDir, s);
      mkdirSync(dir, { recursive: true });
      serviceEnv[s] = { ...serviceEnv[s], NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` };
    }
  }
  const stack = await startStack({ env: { ...BENCH_ENV, ...opts.env }, serviceEnv, readyTimeoutMs: 120_000 });
  return {
    gatewayUrl: stack.baseUrl,
    urls: stack.urls,
    vars: stack.vars,
    owned: true,
    pids: () => Object.fromEntries(STACK_SERVICES.map((s) => [s, pidForPort(stack.ports[s])])) as Record<StackService, number | null>,
    stop: () => stack.stop(),
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
  };
  const local = (u: string) => /^(127\.|localhost|\[::1\])/.test(new URL(u).hostname);
  return {
    gatewayUrl,
    urls,
    vars,
    owned: false,
    pids: () =>
      Object.fromEntries(
        STACK_SERVICES.map((s) => [s, local(urls[s]) ? pidForPort(Number(new URL(urls[s]).port) || 80) : null]),
      ) as Record<StackService, number | null>,
    stop: async () => {},
  };
}
