import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const FIXTURE = fileURLToPath(new URL("./__fixtures__/service-main.ts", import.meta.url));
const TSX = fileURLToPath(new URL("../../../node_modules/.bin/tsx", import.meta.url));

function start(env: Record<string, string> = {}): { child: ChildProcess; out: () => string; err: () => string; exited: Promise<number | null> } {
  const child = spawn(TSX, [FIXTURE], { env: { ...process.env, PORT: "0", INTERNAL_TOKEN: "fixture-token-0123456789", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (c) => (out += c));
  child.stderr!.on("data", (c) => (err += c));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exited };
}

async function until(cond: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("runService: graceful shutdown", () => {
  it("on SIGTERM finishes the in-flight request, refuses new work, runs every stop step in order, exits 0", async () => {
    const svc = start();
    await until(() => /listening:\d+/.test(svc.out()));
    const port = Number(/listening:(\d+)/.exec(svc.out())![1]);
    const headers = { "x-chat-internal-token": "fixture-token-0123456789" };
    const inFlight = fetch(`http://127.0.0.1:${port}/api/v1/slow`, { headers });
    await new Promise((r) => setTimeout(r, 150));
    svc.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 150));
    const late = await fetch(`http://127.0.0.1:${port}/api/v1/slow`, { headers }).then(
      (r) => r.status,
      () => "refused",
    );
    expect(["refused", 503]).toContain(late);
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ result: "success", msg: "", done: true });
    expect(await svc.exited).toBe(0);
    expect(svc.out()).toMatch(/stop:consumers\nstop:relay\n/);
  });

  it("a wrong configuration value stops the process, naming the variable", async () => {
    const svc = start({ DATABASE_POOL_SIZE: "lots", INTERNAL_TOKEN: "short" });
    expect(await svc.exited).toBe(1);
    expect(svc.err()).toContain("DATABASE_POOL_SIZE");
    expect(svc.err()).toContain("INTERNAL_TOKEN");
    expect(svc.err()).not.toContain("short");
  });
});
