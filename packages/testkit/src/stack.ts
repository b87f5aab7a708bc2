import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { encodeParams } from "@chat/platform";
import { request as undiciRequest } from "undici";
import { createTestEnv, REPO_ROOT, type ServiceWithSchema, type TestEnv } from "./env";

/**
 * The whole system as real processes, the way `pnpm start` runs it: five services spawned with
 * `node --import tsx services/<x>/src/main.ts`, each on a free port, sharing one isolated
 * TestEnv (database, Redis prefix, exchange). Used by end-to-end tests at the repo root and in
 * each service's `test/` folder.
 */

export const STACK_SERVICES = ["accounts", "messaging", "scheduler", "events", "gateway"] as const;
export type StackService = (typeof STACK_SERVICES)[number];

/** Services whose migrations run before anything starts (events keeps no tables). */
const SCHEMA_SERVICES: ServiceWithSchema[] = ["accounts", "messaging", "scheduler", "events"];

const URL_VARS: Record<Exclude<StackService, "gateway">, string> = {
  accounts: "ACCOUNTS_URL",
  messaging: "MESSAGING_URL",
  events: "EVENTS_URL",
  scheduler: "SCHEDULER_URL",
};

/** One process of a service, as `serviceEnv` functions see it. */
export interface StackInstance {
  service: StackService;
  /** 0 for the first (or only) process of the service. */
  replica: number;
  /** Every process's base URL, per service (one each unless `replicas` says more). */
  replicaUrls: Record<StackService, string[]>;
}

export interface StackOptions {
  /** Extra variables for every service (override the stack's defaults). */
  env?: Record<string, string>;
  /**
   * Extra variables for one service only; a function gets the stack's variables first (e.g. to
   * route one service's DATABASE_URL through a TCP proxy: `(v) => ({DATABASE_URL: proxy.url(v.DATABASE_URL)})`),
   * and which process of it is being started.
   */
  serviceEnv?: Partial<Record<StackService, Record<string, string> | ((vars: Record<string, string>, instance: StackInstance) => Record<string, string>)>>;
  /**
   * Processes per service (default 1 each), each on a port of its own. The internal URLs every
   * service gets (`ACCOUNTS_URL`, ...) and `urls`/`ports` name the first one; something in front
   * of them (a test's load balancer, through `serviceEnv`) spreads the traffic.
   */
  replicas?: Partial<Record<StackService, number>>;
  /** Start only these (default: all five). Meant for local experiments and the testkit's own tests. */
  services?: readonly StackService[];
  /** Where the services' ports come from (default `freePort`); the testkit's own tests replace it. */
  portSource?: () => Promise<number>;
  /** How long one service may take to answer `/ready` (default 120 s: two busy cores, five tsx boots). */
  readyTimeoutMs?: number;
  /** The entry file of a service, relative to the repo root (default `services/<x>/src/main.ts`). */
  entry?: (service: StackService) => string;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Stack {
  /** The gateway, e.g. `http://127.0.0.1:41234`. */
  baseUrl: string;
  env: TestEnv;
  ports: Record<StackService, number>;
  /** Each service's own base URL (internal routes need the internal token); its first process's with `replicas`. */
  urls: Record<StackService, string>;
  /** The base URL of every process of each service (one each unless `replicas` says more). */
  replicaUrls: Record<StackService, string[]>;
  /** The variables every service got (TestEnv vars, internal URLs, ...). */
  vars: Record<string, string>;
  /** SIGTERM to every service (SIGKILL after a grace period), then drops the database. */
  stop(): Promise<void>;
  /** Sends a signal to one service's process group (its first process, or `replica`) and resolves when it has exited. */
  kill(service: StackService, signal?: NodeJS.Signals, replica?: number): Promise<ExitInfo>;
  /** (Re)starts a stopped service (its first process, or `replica`) on its port and waits until it is ready. */
  start(service: StackService, replica?: number): Promise<void>;
  /** The last lines a service printed (stdout and stderr); every process's, each line prefixed `[#n]`, with replicas, unless `replica` names one. */
  logs(service: StackService, replica?: number): string;
}

interface Running {
  child: ChildProcess;
  exited: Promise<ExitInfo>;
  exit: ExitInfo | null;
  /** Ports the process listens on, as its preload reports them. */
  listening: Set<number>;
}

/** Tells stack-child.ts which file descriptor takes its "listening on" reports. */
const LISTEN_FD_VAR = "TESTKIT_LISTEN_FD";

/** A stack's start is tried again on new ports this many times when a port was taken meanwhile. */
const PORT_CLASH_ATTEMPTS = 3;

const TAIL_LINES = 200;
const STOP_GRACE_MS = 10_000;
const CHILD_PRELOAD = path.join(REPO_ROOT, "packages/testkit/src/stack-child.ts");

/** Every live child of every stack in this process, so a dying test process takes them along. */
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of liveChildren) killGroup(child, "SIGKILL");
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (child.pid === undefined) return;
  try {
    // Negative pid: the whole process group (the service and anything it spawned).
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

function canBind(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => {
      const bound = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A port nothing listens on. Picked below the kernel's ephemeral range (32768+), so no outgoing
 * connection (to PostgreSQL, Redis, ...) can take it between this check and the service's bind.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await canBind(20_000 + Math.floor(Math.random() * 12_000));
    if (port) return port;
  }
  const port = await canBind(0);
  if (!port) throw new Error("no free TCP port");
  return port;
}

class Tail {
  private lines: string[] = [];
  private partial = "";
  constructor(private readonly prefix: string | null) {}
  push(chunk: Buffer) {
    const text = this.partial + chunk.toString("utf8");
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    for (const line of parts) {
      this.lines.push(line);
      if (this.prefix !== null) process.stderr.write(`${this.prefix}${line}\n`);
    }
    if (this.lines.length > TAIL_LINES) this.lines.splice(0, this.lines.length - TAIL_LINES);
  }
  text(): string {
    return [...this.lines, this.partial].filter(Boolean).join("\n");
  }
}

/**
 * Waits until the service listens on `port` and answers `/ready`. Its own report of the port comes
 * first: another process (another test file's stack) may hold the port the service could not
 * bind, and that one's `/ready` must not pass for this one's.
 */
async function waitReady(url: string, port: number, run: Running, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    if (run.exit) throw new Error(`exited (code ${run.exit.code}, signal ${run.exit.signal}) before it was ready`);
    if (!run.listening.has(port)) {
      last = `not listening on ${port} yet`;
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    try {
      const res = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(3000) });
      if (res.status === 200) return;
      last = `/ready answered ${res.status}: ${(await res.text()).slice(0, 500)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`not ready after ${timeoutMs} ms (${last})`);
}

/** The variables every service of a stack gets. */
function stackVars(env: TestEnv, urls: Record<StackService, string>, opts: StackOptions): Record<string, string> {
  return {
    ...env.vars,
    // Warnings and errors only: they land in the tail printed when something fails.
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
    HOST: "127.0.0.1",
    SHUTDOWN_GRACE_SECONDS: "5",
    // Several stacks and service suites share one PostgreSQL (max_connections 100 by default).
    DATABASE_POOL_SIZE: "5",
    GATEWAY_URL: urls.gateway,
    // Relays publish runs of events as one broker message, as a deployment does once every pod
    // reads them; the services' own suites keep the default (one message per event).
    AMQP_PUBLISH_BATCHES: "true",
    // What clients reach: realm_url in server_settings/register, and the demo's base_url.
    EXTERNAL_URL: urls.gateway,
    ...Object.fromEntries(Object.entries(URL_VARS).map(([s, v]) => [v, urls[s as StackService]])),
    ...opts.env,
  };
}

/**
 * Runs every service's migrations into a fresh TestEnv, spawns the services on free ports and
 * waits until each listens there and answers `/ready` (on new ports when another process took
 * one between the check and the service's bind). On failure it stops what it started and
 * throws with the failing service's output tail.
 */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  installExitHook();
  const services = opts.services ?? STACK_SERVICES;
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  const env = await createTestEnv();
  await env.migrate(...SCHEMA_SERVICES.filter((s) => existsSync(path.join(REPO_ROOT, "services", s, "migrations"))));

  const count = (s: StackService) => Math.max(1, opts.replicas?.[s] ?? 1);
  const ports = {} as Record<StackService, number>;
  const urls = {} as Record<StackService, string>;
  /** Every process's port, per service; `ports` holds the first of each. */
  const replicaPorts = {} as Record<StackService, number[]>;
  const replicaUrls = {} as Record<StackService, string[]>;
  const vars: Record<string, string> = {};
  const pickPorts = async () => {
    for (const s of STACK_SERVICES) {
      replicaPorts[s] = [];
      for (let i = 0; i < count(s); i++) replicaPorts[s].push(await (opts.portSource ?? freePort)());
      replicaUrls[s] = replicaPorts[s].map((p) => `http://127.0.0.1:${p}`);
      ports[s] = replicaPorts[s][0];
      urls[s] = replicaUrls[s][0];
    }
    Object.assign(vars, stackVars(env, urls, opts));
  };

  /** Keyed by `key(service, replica)`. */
  const running = new Map<string, Running>();
  const tails = new Map<string, Tail>();
  const key = (service: StackService, replica: number) => `${service}#${replica}`;
  const mirror = process.env.STACK_LOGS === "1";

  const own = (service: StackService, replica: number): Record<string, string> => {
    const extra = opts.serviceEnv?.[service];
    return typeof extra === "function" ? extra(vars, { service, replica, replicaUrls }) : (extra ?? {});
  };

  const spawnService = (service: StackService, replica: number): Running => {
    const label = count(service) > 1 ? `${service}#${replica}` : service;
    const tail = tails.get(key(service, replica)) ?? new Tail(mirror ? `[${label}] ` : null);
    tails.set(key(service, replica), tail);
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--import", CHILD_PRELOAD, opts.entry?.(service) ?? path.join("services", service, "src", "main.ts")],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, ...vars, ...own(service, replica), PORT: String(replicaPorts[service][replica]), [LISTEN_FD_VAR]: "3" },
        // Own process group, so stop() reaches anything the service spawns.
        detached: true,
        // fd 3: the ports the service listens on (see stack-child.ts).
        stdio: ["pipe", "pipe", "pipe", "pipe"],
      },
    );
    liveChildren.add(child);
    child.stdout!.on("data", (c: Buffer) => tail.push(c));
    child.stderr!.on("data", (c: Buffer) => tail.push(c));
    const run: Running = { child, exit: null, exited: null as never, listening: new Set() };
    let partial = "";
    (child.stdio[3] as NodeJS.ReadableStream).on("data", (c: Buffer) => {
      const lines = (partial + c.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) run.listening.add(Number(line));
    });
    run.exited = new Promise<ExitInfo>((resolve) => {

      child.once("exit", (code, signal) => {
        liveChildren.delete(child);
        run.exit = { code, signal };
        resolve(run.exit);
      });
      child.once("error", (err) => {
        tail.push(Buffer.from(`spawn failed: ${err.message}\n`));
        liveChildren.delete(child);
        run.exit = { code: null, signal: null };
        resolve(run.exit);
      });
    });
    running.set(key(service, replica), run);
    return run;
  };

  const failure = (service: StackService, replica: number, err: Error) => {
    const label = count(service) > 1 ? `${service}#${replica}` : service;
    return new Error(`${label} failed to start: ${err.message}\n--- ${label} output (last lines) ---\n${tails.get(key(service, replica))?.text() || "(nothing)"}`);
  };

  const checkReplica = (service: StackService, replica: number) => {
    if (!Number.isInteger(replica) || replica < 0 || replica >= count(service)) throw new Error(`${service} has no replica ${replica}`);
  };

  const startOne = async (service: StackService, replica = 0) => {
    checkReplica(service, replica);
    const current = running.get(key(service, replica));
    if (current && !current.exit) throw new Error(`${service} is already running`);
    const run = spawnService(service, replica);
    try {
      await waitReady(replicaUrls[service][replica], replicaPorts[service][replica], run, readyTimeoutMs);
    } catch (err) {
      throw failure(service, replica, err as Error);
    }
  };

  const killRun = async (run: Running, signal: NodeJS.Signals = "SIGTERM"): Promise<ExitInfo> => {
    if (run.exit) return run.exit;
    killGroup(run.child, signal);
    const timer = setTimeout(() => killGroup(run.child, "SIGKILL"), STOP_GRACE_MS);
    try {
      return await run.exited;
    } finally {
      clearTimeout(timer);
    }
  };

  const killOne = async (service: StackService, signal: NodeJS.Signals = "SIGTERM", replica = 0): Promise<ExitInfo> => {
    checkReplica(service, replica);
    const run = running.get(key(service, replica));
    if (!run) throw new Error(`${service} was never started`);
    return killRun(run, signal);
  };

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all([...running.values()].map((run) => killRun(run)));
    await env.cleanup().catch(() => {});
  };

  for (let attempt = 1; ; attempt++) {
    await pickPorts();
    try {
      // Parallel boots; the gateway's readiness needs accounts, so a slow one just waits longer.
      await Promise.all(services.flatMap((s) => Array.from({ length: count(s) }, (_, i) => startOne(s, i))));
      break;
    } catch (err) {
      // A port found free was bound by another process before the service could bind it.
      if (attempt < PORT_CLASH_ATTEMPTS && /EADDRINUSE/.test((err as Error).message)) {
        await Promise.all([...running.values()].map((run) => killRun(run)));
        running.clear();
        continue;
      }
      await stop();
      throw err;
    }
  }

  return {
    baseUrl: urls.gateway,
    env,
    ports,
    urls,
    replicaUrls,
    vars,
    stop,
    kill: killOne,
    start: startOne,
    logs: (s, replica) => {
      if (replica !== undefined || count(s) === 1) return tails.get(key(s, replica ?? 0))?.text() ?? "";
      return Array.from({ length: count(s) }, (_, i) =>
        (tails.get(key(s, i))?.text() ?? "")
          .split("\n")
          .filter(Boolean)
          .map((l) => `[#${i}] ${l}`)
          .join("\n"),
      )
        .filter(Boolean)
        .join("\n");
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The demo organization (`pnpm chat demo --json`)

export interface DemoUser {
  user_id: number;
  email: string;
  api_key: string;
  role: number;
  full_name: string;
}

export interface DemoChannel {
  stream_id: number;
  name: string;
}

export interface DemoOrg {
  id: number;
  name: string;
  /** Its own URL, only with ORGANIZATION_SUBDOMAINS. */
  url?: string;
  users: { owner: DemoUser; admin: DemoUser; moderator: DemoUser; member: DemoUser; member2: DemoUser; guest: DemoUser; bot: DemoUser };
  channels: { public: DemoChannel; private: DemoChannel };
}

export interface DemoOrg2 {
  id: number;
  name: string;
  url?: string;
  users: { owner: DemoUser; member: DemoUser };
  channels: { public: DemoChannel };
}

export interface DemoOutput {
  base_url: string;
  orgs: [DemoOrg, DemoOrg2];
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the admin CLI against a stack (its database, internal URLs, token and gateway): as
 * `pnpm chat <args>` with `viaPnpm`, else straight through node (the same script, without
 * pnpm's start-up cost).
 */
export function runChat(
  stack: Pick<Stack, "vars" | "baseUrl">,
  args: string[],
  opts: { viaPnpm?: boolean; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const [cmd, argv] = opts.viaPnpm ? ["pnpm", ["chat", ...args]] : [process.execPath, ["--import", "tsx", "scripts/chat.ts", ...args]];
    const child = spawn(cmd, argv, {
      cwd: REPO_ROOT,
      env: { ...process.env, ...stack.vars, LOG_LEVEL: "warn", GATEWAY_URL: stack.baseUrl },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 120_000);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * `pnpm chat demo --json` against the stack: a fresh demo organization (plus ORG2) per call.
 * `viaPnpm: false` runs the same script straight through node, without pnpm's start-up (about
 * 1.3 s a call on two busy cores), for files that need the organizations, not the command.
 */
export async function runDemo(stack: Pick<Stack, "vars" | "baseUrl">, { viaPnpm = true } = {}): Promise<DemoOutput> {
  const res = await runChat(stack, ["demo", "--json"], { viaPnpm });
  if (res.code !== 0) throw new Error(`pnpm chat demo --json exited with ${res.code}\n${res.stderr}\n${res.stdout}`);
  try {
    return JSON.parse(res.stdout) as DemoOutput;
  } catch {
    throw new Error(`pnpm chat demo --json did not print one JSON object on stdout:\n${res.stdout}\n--- stderr ---\n${res.stderr}`);
  }
}

// ---------------------------------------------------------------------------------------------
// A Zulip-style HTTP client for tests

export interface ApiResponse {
  status: number;
  /** Parsed JSON when the body is JSON, else the text. */
  body: any;
  headers: Record<string, string>;
}

export interface RequestOptions {
  /** A `host` header here is sent as it is (fetch would replace it with the URL's). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

type Params = Record<string, unknown>;

/** Paths served outside `/api/v1`; everything else is taken as relative to it. */
const ROOT_PATHS = ["/api/", "/user_uploads/", "/health", "/ready", "/metrics"];

/**
 * A client that talks to the gateway like a Zulip client: HTTP Basic auth (when credentials
 * are given), GET parameters in the query, others as a urlencoded form; non-string values
 * JSON-encoded. Paths are relative to `/api/v1` (`/users/me`).
 */
export function apiClient(baseUrl: string, email?: string | null, apiKey?: string | null) {
  const auth = email != null && apiKey != null ? "Basic " + Buffer.from(`${email}:${apiKey}`).toString("base64") : null;
  const request = async (method: string, pathOrUrl: string, params: Params = {}, opts: RequestOptions = {}): Promise<ApiResponse> => {
    const isUrl = /^https?:\/\//.test(pathOrUrl);
    let url = isUrl ? pathOrUrl : baseUrl + (ROOT_PATHS.some((p) => pathOrUrl.startsWith(p)) ? "" : "/api/v1") + pathOrUrl;
    const headers: Record<string, string> = { ...(auth ? { authorization: auth } : {}), ...opts.headers };
    const form = encodeParams(params).toString();
    let body: string | undefined;
    if (method === "GET") {
      if (form) url += (url.includes("?") ? "&" : "?") + form;
    } else {
      body = form;
      headers["content-type"] ??= "application/x-www-form-urlencoded";
    }
    const res = headers.host ? await withHost(url, method, headers, body, opts.signal) : await fetch(url, { method, headers, body, signal: opts.signal });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get("content-type") ?? "").includes("json")) {
      try {
        parsed = JSON.parse(text);
      } catch {
        /* keep the text */
      }
    }
    return { status: res.status, body: parsed, headers: Object.fromEntries(res.headers.entries()) };
  };
  return {
    request,
    get: (p: string, params?: Params, opts?: RequestOptions) => request("GET", p, params, opts),
    post: (p: string, params?: Params, opts?: RequestOptions) => request("POST", p, params, opts),
    patch: (p: string, params?: Params, opts?: RequestOptions) => request("PATCH", p, params, opts),
    put: (p: string, params?: Params, opts?: RequestOptions) => request("PUT", p, params, opts),
    delete: (p: string, params?: Params, opts?: RequestOptions) => request("DELETE", p, params, opts),
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

/** A request naming its own Host (an organization's host that does not resolve here), as fetch's answer. */
async function withHost(url: string, method: string, headers: Record<string, string>, body: string | undefined, signal?: AbortSignal) {
  const res = await undiciRequest(url, { method: method as "GET", headers, body, signal });
  const text = await res.body.text();
  const flat = Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")] as [string, string]);
  return { status: res.statusCode, headers: new Headers(flat), text: async () => text };
}

/** An API client for one demo user. */
export const demoClient = (demo: DemoOutput, user: DemoUser) => apiClient(demo.base_url, user.email, user.api_key);
