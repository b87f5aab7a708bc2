import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "@chat/testkit";

/**
 * What each image holds, checked without a container engine: the Dockerfile's build stage is
 * replayed in a temporary directory (its COPY lines and its `build-app` steps, with the same
 * production-only install), then the tree must start the service's code and the admin CLI and
 * must not contain test tooling.
 */

const SERVICES = ["gateway", "accounts", "messaging", "events", "scheduler"];
const IGNORED = new Set(["node_modules", ".logs", ".uploads", ".git"]);

/** The build stage's instructions, in order, with `${SERVICE}` substituted. */
function buildSteps(service: string): Array<{ copy: [string[], string] } | { run: string }> {
  const text = readFileSync(path.join(REPO_ROOT, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
  const stage = text.split(/^FROM /m)[1];
  const steps: Array<{ copy: [string[], string] } | { run: string }> = [];
  for (const raw of stage.split("\n")) {
    const line = raw.trim().replace(/\$\{SERVICE\}|\$SERVICE/g, service);
    if (line.startsWith("COPY ") && !line.includes("--from")) {
      const parts = line.slice(5).trim().split(/\s+/);
      steps.push({ copy: [parts.slice(0, -1), parts.at(-1)!] });
    } else if (line.startsWith("RUN build-app")) {
      steps.push({ run: line.slice(4).replace(/"/g, "") });
    }
  }
  return steps;
}

function copyInto(app: string, sources: string[], dest: string) {
  const target = path.resolve(app, dest);
  for (const src of sources) {
    const from = path.join(REPO_ROOT, src);
    if (src.startsWith("scripts/docker/build-app.sh")) continue; // the helper itself, run from the repo
    const to = dest.endsWith("/") ? path.join(target, statSync(from).isDirectory() ? "" : path.basename(src)) : target;
    cpSync(from, to, { recursive: true, filter: (f) => !IGNORED.has(path.basename(f)) });
  }
}

function dirSize(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    total += entry.isDirectory() ? dirSize(full) : statSync(full).size;
  }
  return total;
}

const work = mkdtempSync(path.join(os.tmpdir(), "chat-image-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.each(SERVICES)("image %s", (service) => {
  const app = path.join(work, service);

  it("builds from the Dockerfile's steps with production dependencies only", () => {
    for (const step of buildSteps(service)) {
      if ("copy" in step) copyInto(app, ...step.copy);
      else {
        const [, sub, arg] = step.run.split(/\s+/);
        execFileSync("sh", [path.join(REPO_ROOT, "scripts/docker/build-app.sh"), sub, arg], { cwd: app, stdio: ["ignore", "pipe", "pipe"] });
      }
    }
    const store = path.join(app, "node_modules", ".pnpm");
    const tooling = readdirSync(store).filter((p) => /^(vitest|typescript|testcontainers|kubernetes-types|@vitest\+|yaml)@/.test(p));
    expect(tooling).toEqual([]);
    expect(existsSync(path.join(app, "services", service, "test"))).toBe(false);
    expect(existsSync(path.join(app, "packages", "testkit"))).toBe(false);
    for (const other of SERVICES.filter((s) => s !== service)) expect(existsSync(path.join(app, "services", other, "src"))).toBe(false);
    console.log(`image ${service}: app tree ${(dirSize(app) / 1024 / 1024).toFixed(1)} MiB`);
  }, 120_000);

  it("loads every module of the service (a bad setting stops it after the imports)", () => {
    const res = spawnSync(process.execPath, ["--import", "tsx", `services/${service}/src/main.ts`], {
      cwd: app,
      env: { PATH: process.env.PATH, NODE_ENV: "production", LOG_LEVEL: "not-a-level" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(res.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
    expect(res.stderr).toContain("LOG_LEVEL");
    expect(res.stderr).not.toMatch(/^\s+at /m); // the variable and why, not a stack trace
    expect(res.status).toBe(1);
  }, 90_000);
});

// The same in every image; checked in the one the migration job uses (built above).
it("the accounts image carries the admin CLI and every schema's migrations", () => {
  const app = path.join(work, "accounts");
  const res = spawnSync(path.join(app, "chat"), ["--help"], { encoding: "utf8", timeout: 60_000 });
  expect(res.stderr).toBe("");
  expect(res.stdout).toContain("migrate");
  for (const s of ["accounts", "messaging", "scheduler"]) {
    expect(readdirSync(path.join(app, "services", s, "migrations")).some((f) => f.endsWith(".sql")), s).toBe(true);
  }
}, 90_000);
