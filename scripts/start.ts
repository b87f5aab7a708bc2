/**
 * `pnpm start`: the whole server on this machine. Checks PostgreSQL, Redis and RabbitMQ, runs
 * migrations, starts the five services as child processes, waits until each is ready, creates a
 * demo organization and prints how to use it. Ctrl-C stops everything cleanly.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import type { NetConnectOpts } from "node:net";
import path from "node:path";
import { parseIntoClientConfig } from "pg-connection-string";
import { baseConfigShape, ConfigError, loadConfig, SERVICE_PORTS } from "@chat/platform";
import { endpointOpen, portOpen, START_COMMANDS } from "@chat/testkit";
import { CliError } from "./lib/clients";
import { loadCliConfig, startConfigShape } from "./lib/config";
import { createDemo, describeDemo } from "./lib/demo";
import { migrateAll, REPO_ROOT } from "./lib/migrate";

type Service = keyof typeof SERVICE_PORTS;
/** They boot in parallel; `/ready` tells when each can serve. */
const SERVICES: Service[] = ["accounts", "messaging", "scheduler", "events", "gateway"];

const INFRA = [
  { name: "PostgreSQL", variable: "DATABASE_URL", defaultPort: 5432, start: START_COMMANDS.postgres },
  { name: "Redis", variable: "REDIS_URL", defaultPort: 6379, start: START_COMMANDS.redis },
  { name: "RabbitMQ", variable: "AMQP_URL", defaultPort: 5672, start: START_COMMANDS.rabbitmq },
] as const;

/** Each service listens on the port of its URL variable, so one setting moves a service. */
const URL_VARIABLES: Record<Service, string> = {
  gateway: "GATEWAY_URL",
  accounts: "ACCOUNTS_URL",
  messaging: "MESSAGING_URL",
  events: "EVENTS_URL",
  scheduler: "SCHEDULER_URL",
};

function servicePorts(env: Record<string, string | undefined>): Record<Service, number> {
  return Object.fromEntries(
    SERVICES.map((s) => {
      const url = env[URL_VARIABLES[s]];
      return [s, url ? Number(new URL(url).port) || SERVICE_PORTS[s] : SERVICE_PORTS[s]];
    }),
  ) as Record<Service, number>;
}

const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 20_000;
const { LOGS_DIR } = loadConfig(startConfigShape);
/** Where each service's full log goes. */
const LOG_DIR = LOGS_DIR ? path.resolve(LOGS_DIR) : path.join(REPO_ROOT, ".logs");
const CHILD_PRELOAD = path.join(REPO_ROOT, "packages/testkit/src/stack-child.ts");

const say = (line: string) => process.stdout.write(`${line}\n`);
const warn = (line: string) => process.stderr.write(`${line}\n`);

/**
 * Where a server listens, from its URL: PostgreSQL's as pg reads it (a socket directory as the
 * host means its socket file, `.s.PGSQL.<port>` there), the others' host and port.
 */
function endpointOf(infra: (typeof INFRA)[number], value: string): { where: NetConnectOpts; shown: string } {
  if (infra.variable === "DATABASE_URL") {
    const c = parseIntoClientConfig(value);
    const port = c.port ?? infra.defaultPort;
    const host = c.host || "localhost";
    if (host.startsWith("/")) {
      const file = path.join(host, `.s.PGSQL.${port}`);
      return { where: { path: file }, shown: file };
    }
    return { where: { host, port }, shown: `${host}:${port}` };
  }
  const url = new URL(value);
  const port = Number(url.port || infra.defaultPort);
  return { where: { host: url.hostname, port }, shown: `${url.hostname}:${port}` };
}

/** Says which of PostgreSQL, Redis and RabbitMQ do not answer, and how to start each. */
async function checkInfrastructure(env: Record<string, string>): Promise<boolean> {
  const missing: string[] = [];
  for (const infra of INFRA) {
    const { where, shown } = endpointOf(infra, env[infra.variable]);
    if (!(await endpointOpen(where))) {
      missing.push(`  ${infra.name} does not answer at ${shown} (${infra.variable}). Start it with:\n    ${infra.start}`);
    }
  }
  if (missing.length) warn(`Cannot start: required servers are not running.\n${missing.join("\n")}`);
  return missing.length === 0;
}

interface Child {
  service: Service;
  proc: ChildProcess;
  log: WriteStream;
  exited: Promise<number | null>;
  exitCode: number | null | undefined;
  tail: string[];
  /** The ports the process reported listening on (fd 3, see packages/testkit/src/stack-child.ts). */
  listening: Set<number>;
}

/**
 * Full JSON logs go to `.logs/<service>.log`; the terminal gets warnings, errors and anything
 * that is not a log line (a crash's stack trace), prefixed with the service name.
 */
function relay(child: Child, chunk: Buffer, partial: { text: string }) {
  child.log.write(chunk);
  const lines = (partial.text + chunk.toString("utf8")).split("\n");
  partial.text = lines.pop() ?? "";
  for (const line of lines) {
    child.tail.push(line);
    if (child.tail.length > 50) child.tail.shift();
    let level = 100;
    try {
      level = Number(JSON.parse(line).level ?? 100);
    } catch {
      /* not a JSON log line: always show it */
    }
    if (level >= 40 && line.trim()) warn(`[${child.service}] ${line}`);
  }
}

function spawnService(service: Service, env: Record<string, string>, port: number): Child {
  const proc = spawn(process.execPath, ["--import", "tsx", "--import", CHILD_PRELOAD, path.join("services", service, "src", "main.ts")], {
    cwd: REPO_ROOT,
    env: { ...env, PORT: String(port), TESTKIT_LISTEN_FD: "3" },
    // Own process group: Ctrl-C reaches only this script, which then stops the services in order.
    detached: true,
    stdio: ["pipe", "pipe", "pipe", "pipe"],
  });
  const child: Child = {
    service,
    proc,
    log: createWriteStream(path.join(LOG_DIR, `${service}.log`), { flags: "a" }),
    exited: null as never,
    exitCode: undefined,
    tail: [],
    listening: new Set(),
  };
  const out = { text: "" };
  const err = { text: "" };
  proc.stdout!.on("data", (c: Buffer) => relay(child, c, out));
  proc.stderr!.on("data", (c: Buffer) => relay(child, c, err));
  const ports = { text: "" };
  (proc.stdio[3] as NodeJS.ReadableStream).on("data", (c: Buffer) => {
    const lines = (ports.text + c.toString("utf8")).split("\n");
    ports.text = lines.pop() ?? "";
    for (const line of lines) child.listening.add(Number(line));
  });
  child.exited = new Promise((resolve) => {
    proc.once("exit", (code) => {
      child.exitCode = code;
      resolve(code);
    });
    proc.once("error", (e) => {
      warn(`[${service}] could not start: ${e.message}`);
      child.exitCode = null;
      resolve(null);
    });
  });
  return child;
}

/**
 * Ready once the service itself said it listens on its port and its `/ready` answers 200: a
 * `/ready` alone could be another process's, one that took the port after the check above.
 */
async function waitReady(child: Child, port: number): Promise<void> {
  const url = `http://127.0.0.1:${port}/ready`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = "no answer";
  while (Date.now() < deadline) {
    if (child.exitCode !== undefined) throw new Error(`${child.service} exited (code ${child.exitCode}) while starting`);
    if (!child.listening.has(port)) {
      last = `not listening on port ${port} yet`;
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
      if (res.ok) return;
      last = `${res.status} ${(await res.text()).slice(0, 300)}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${child.service} was not ready after ${READY_TIMEOUT_MS / 1000} s (${last})`);
}

function signalGroup(child: Child, signal: NodeJS.Signals) {
  if (child.exitCode !== undefined || child.proc.pid === undefined) return;
  try {
    process.kill(-child.proc.pid, signal);
  } catch {
    child.proc.kill(signal);
  }
}

async function stopAll(children: Child[]): Promise<void> {
  // The gateway first, so no new requests arrive while the others finish theirs.
  const gateway = children.find((c) => c.service === "gateway");
  const rest = children.filter((c) => c !== gateway);
  for (const group of [gateway ? [gateway] : [], rest]) {
    for (const c of group) signalGroup(c, "SIGTERM");
    const timer = setTimeout(() => group.forEach((c) => signalGroup(c, "SIGKILL")), STOP_TIMEOUT_MS);
    await Promise.all(group.map((c) => c.exited));
    clearTimeout(timer);
  }
  for (const c of children) c.log.end();
}

async function main(): Promise<number> {
  const env = { ...process.env } as Record<string, string>;
  const infraConfig = loadConfig({ DATABASE_URL: baseConfigShape.DATABASE_URL, REDIS_URL: baseConfigShape.REDIS_URL, AMQP_URL: baseConfigShape.AMQP_URL }, env);
  Object.assign(env, infraConfig);
  if (!(await checkInfrastructure(env))) return 1;

  const ports = servicePorts(env);
  for (const s of SERVICES) {
    if (await portOpen("127.0.0.1", ports[s], 500)) {
      warn(`Port ${ports[s]} (${s}) is already in use: is another \`pnpm start\` running?`);
      return 1;
    }
  }

  say("Applying database migrations...");
  await migrateAll(infraConfig.DATABASE_URL, (line) => say(`  ${line}`));

  mkdirSync(LOG_DIR, { recursive: true });
  say(`Starting ${SERVICES.join(", ")} (logs in ${path.relative(process.cwd(), LOG_DIR) || "."}/<service>.log)...`);
  const children = SERVICES.map((s) => spawnService(s, env, ports[s]));
  let stopping = false;
  const shutdown = async (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    say(`\n${why}: stopping the services...`);
    await stopAll(children);
    say("Stopped.");
    process.exit(code);
  };
  process.on("SIGINT", () => void shutdown("Interrupted", 0));
  process.on("SIGTERM", () => void shutdown("Terminated", 0));

  try {
    await Promise.all(children.map((c) => waitReady(c, ports[c.service])));
  } catch (e) {
    warn(`\n${(e as Error).message}`);
    for (const c of children.filter((x) => x.exitCode !== undefined)) {
      warn(`--- last lines of ${c.service} (.logs/${c.service}.log) ---\n${c.tail.join("\n")}`);
    }
    await shutdown("Start failed", 1);
    return 1;
  }
  // After start-up a crashed service brings the rest down: a half-running server misleads.
  for (const c of children) {
    void c.exited.then((code) => {
      if (!stopping) {
        warn(`\n${c.service} exited unexpectedly (code ${code}); last lines:\n${c.tail.join("\n")}`);
        void shutdown("A service failed", 1);
      }
    });
  }

  const cliConfig = loadCliConfig(env);
  say("Creating a demo organization...");
  let demo;
  try {
    demo = await createDemo(cliConfig, (line) => say(`  ${line}`));
  } catch (e) {
    warn(`Creating the demo organization failed: ${(e as Error).message}`);
    await shutdown("Start failed", 1);
    return 1;
  }
  say("");
  say(`The server is running. Gateway (the API base URL): ${cliConfig.GATEWAY_URL}`);
  say("A demo organization, with an API key per user (HTTP Basic auth: email + API key):");
  say(describeDemo(demo).join("\n"));
  say("");
  say(`Try: curl -u ${demo.orgs[0].users.member.email}:${demo.orgs[0].users.member.api_key} ${cliConfig.GATEWAY_URL}/api/v1/users/me`);
  say("Press Ctrl-C to stop.");
  return 0;
}

main().then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err) => {
    warn(err instanceof CliError || err instanceof ConfigError ? `error: ${err.message}` : `error: ${(err as Error).stack ?? err}`);
    process.exit(1);
  },
);
