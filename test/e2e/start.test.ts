import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, createTestEnv, freePort, portOpen, REPO_ROOT, type TestEnv } from "@chat/testkit";

/**
 * `pnpm start` itself (scripts/start.ts, after the install step): infrastructure check,
 * migrations, five services, demo credentials, and a clean stop on Ctrl-C. Runs on free ports
 * and an isolated database so it never meets a developer's own `pnpm start`.
 */

interface Started {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function runStart(vars: Record<string, string>): Started {
  const proc = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...vars },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout!.on("data", (c: Buffer) => (out += c.toString("utf8")));
  proc.stderr!.on("data", (c: Buffer) => (err += c.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return { proc, stdout: () => out, stderr: () => err, exited };
}

async function waitFor(cond: () => boolean, timeoutMs: number, what: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting; output so far:\n${what()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Every service but events on a free port (the tests place events themselves), so a developer's
 * own `pnpm start` on the default ports is not what a test finds.
 */
async function othersOnFreePorts(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const v of ["GATEWAY_URL", "ACCOUNTS_URL", "MESSAGING_URL", "SCHEDULER_URL"]) out[v] = `http://127.0.0.1:${await freePort()}`;
  return out;
}

describe("pnpm start", () => {
  let env: TestEnv;
  let logs: string;

  beforeAll(async () => {
    env = await createTestEnv();
    logs = mkdtempSync(path.join(os.tmpdir(), "chat-start-"));
  });

  afterAll(async () => {
    await env?.cleanup();
    rmSync(logs, { recursive: true, force: true });
  });

  it("says which server is missing and how to start it, and exits 1", async () => {
    const closed = await freePort();
    const run = runStart({ ...env.vars, REDIS_URL: `redis://127.0.0.1:${closed}`, LOGS_DIR: logs });
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain(`Redis does not answer at 127.0.0.1:${closed} (REDIS_URL)`);
    expect(run.stderr()).toContain("redis-server");
    expect(run.stderr()).not.toContain("PostgreSQL does not answer");
  });

  it("looks for PostgreSQL at the socket a DATABASE_URL names, and says where it looked", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "chat-nosocket-"));
    try {
      const run = runStart({ ...env.vars, DATABASE_URL: `postgres://postgres@/chat?host=${dir}&port=5499`, LOGS_DIR: logs });
      expect(await run.exited).toBe(1);
      expect(run.stderr()).toContain(`PostgreSQL does not answer at ${dir}/.s.PGSQL.5499 (DATABASE_URL)`);
      expect(run.stderr()).not.toContain("Invalid configuration");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses to start when a service's port is taken (another `pnpm start`?)", async () => {
    const busy = net.createServer().listen(0, "127.0.0.1");
    await new Promise((r) => busy.once("listening", r));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const run = runStart({ ...env.vars, ...(await othersOnFreePorts()), LOGS_DIR: logs, EVENTS_URL: `http://127.0.0.1:${port}` });
      expect(await run.exited).toBe(1);
      expect(run.stderr()).toContain(`Port ${port} (events) is already in use`);
      expect(run.stdout()).not.toContain("Starting");
    } finally {
      busy.close();
    }
  });

  it("does not take another process's /ready for its service's: a port taken after the check fails the start", async () => {
    // A stranger that binds the events port once `pnpm start` has checked it and answers /ready.
    const port = await freePort();
    const stranger = http.createServer((_req, res) => res.end("{}"));
    const run = runStart({ ...env.vars, ...(await othersOnFreePorts()), LOGS_DIR: logs, EVENTS_URL: `http://127.0.0.1:${port}` });
    try {
      await waitFor(() => run.stdout().includes("Applying database migrations") || run.proc.exitCode !== null, 60_000, () => run.stdout() + run.stderr());
      await new Promise<void>((resolve) => stranger.listen(port, "127.0.0.1", resolve));
      expect(await run.exited).toBe(1);
      expect(run.stderr()).toContain("events exited (code 1) while starting");
      expect(run.stderr()).toContain("EADDRINUSE");
      expect(run.stdout()).not.toContain("Creating a demo organization");
    } finally {
      run.proc.kill("SIGINT");
      stranger.close();
    }
  }, 120_000);

  it("migrates, starts every service, prints working demo credentials and stops cleanly on Ctrl-C", async () => {
    const url = (p: number) => `http://127.0.0.1:${p}`;
    const start = async () => {
      const ports = { gateway: 0, accounts: 0, messaging: 0, events: 0, scheduler: 0 };
      for (const k of Object.keys(ports) as Array<keyof typeof ports>) ports[k] = await freePort();
      const run = runStart({
        ...env.vars,
        LOG_LEVEL: "warn",
        LOGS_DIR: logs,
        GATEWAY_URL: url(ports.gateway),
        ACCOUNTS_URL: url(ports.accounts),
        MESSAGING_URL: url(ports.messaging),
        EVENTS_URL: url(ports.events),
        SCHEDULER_URL: url(ports.scheduler),
      });
      await waitFor(() => run.stdout().includes("Press Ctrl-C") || run.proc.exitCode !== null, 150_000, () => run.stdout() + run.stderr());
      return { ports, run };
    };
    // A port found free can be taken by a parallel test file's stack before the service binds
    // it; `pnpm start` then fails with EADDRINUSE, and the test starts it again on other ports.
    let started = await start();
    for (let attempt = 2; attempt <= 3 && started.run.proc.exitCode !== null && /EADDRINUSE/.test(started.run.stderr()); attempt++) {
      started = await start();
    }
    const { ports, run } = started;
    try {
      expect(run.stdout()).toContain(`Gateway (the API base URL): ${url(ports.gateway)}`);
      const curl = /curl -u (\S+):(\S+) (\S+)\/api\/v1\/users\/me/.exec(run.stdout());
      expect(curl, run.stdout() + run.stderr()).not.toBeNull();
      const [, email, key, base] = curl!;
      const me = await apiClient(base, email, key).get("/users/me");
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ email, role: 400 });
      for (const role of ["owner", "admin", "moderator", "member", "member2", "guest", "bot"]) {
        expect(run.stdout()).toMatch(new RegExp(`^  ${role} +\\S+@\\S+ +API key [A-Za-z0-9]{32}`, "m"));
      }
    } finally {
      run.proc.kill("SIGINT");
    }
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toContain("Stopped.");
    for (const port of Object.values(ports)) expect(await portOpen("127.0.0.1", port)).toBe(false);
  }, 200_000);
});
