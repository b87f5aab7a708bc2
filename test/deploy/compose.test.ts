import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "@chat/testkit";
import { renderConfigReference } from "../../scripts/docs/config-reference";

/**
 * docker-compose.yml, checked offline: Debian's docker-compose validates it without an engine
 * (`config -q`; .ci/run installs it), and the structure operators rely on is asserted here.
 */

const FILE = path.join(REPO_ROOT, "docker-compose.yml");
const APP = ["gateway", "accounts", "messaging", "events", "scheduler"];
const compose = () => parse(readFileSync(FILE, "utf8"), { merge: true }) as { services: Record<string, any>; volumes: Record<string, unknown> };

it("passes `docker-compose config -q`", () => {
  const probe = spawnSync("docker-compose", ["version"], { encoding: "utf8" });
  if (probe.error) {
    // Developer machines without the binary still get the structural checks below.
    console.warn("docker-compose is not installed: only the structural checks ran (.ci/run installs it)");
    return;
  }
  execFileSync("docker-compose", ["-f", FILE, "config", "-q"], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
});

it("runs the five services, PostgreSQL, Redis, RabbitMQ and a one-shot migration", () => {
  const { services } = compose();
  expect(Object.keys(services).sort()).toEqual([...APP, "migrate", "postgres", "rabbitmq", "redis"].sort());
  for (const s of APP) {
    expect(services[s].build.args.SERVICE, s).toBe(s);
    expect(services[s].image, s).toMatch(new RegExp(`^team-chat/${s}:`));
  }
  expect(services.migrate.command).toEqual(["chat", "migrate"]);
  expect(services.migrate.restart).toBe("no");
});

it("publishes only the gateway's port", () => {
  const { services } = compose();
  const publishing = Object.entries(services).filter(([, s]) => s.ports?.length).map(([n]) => n);
  expect(publishing).toEqual(["gateway"]);
  expect(services.gateway.ports).toEqual(["${GATEWAY_PORT:-9991}:9991"]);
});

it("starts services after healthy infrastructure and a finished migration", () => {
  const { services } = compose();
  for (const infra of ["postgres", "redis", "rabbitmq"]) expect(services[infra].healthcheck?.test, infra).toBeDefined();
  for (const s of APP) {
    expect(services[s].depends_on, s).toMatchObject({
      postgres: { condition: "service_healthy" },
      redis: { condition: "service_healthy" },
      rabbitmq: { condition: "service_healthy" },
      migrate: { condition: "service_completed_successfully" },
    });
  }
  for (const s of APP.filter((x) => x !== "gateway")) expect(services.gateway.depends_on[s]).toEqual({ condition: "service_healthy" });
});

it("keeps data and uploads in named volumes", () => {
  const { services, volumes } = compose();
  const mounts = (s: string) => (services[s].volumes ?? []) as string[];
  expect(mounts("postgres").some((m) => m.endsWith(":/var/lib/postgresql/data"))).toBe(true);
  expect(mounts("rabbitmq").some((m) => m.endsWith(":/var/lib/rabbitmq"))).toBe(true);
  expect(mounts("messaging")).toContain("uploads:/data/uploads");
  expect(Object.keys(volumes).sort()).toEqual(["postgres-data", "rabbitmq-data", "uploads"]);
});

it("sets only variables the services actually read", async () => {
  const { services } = compose();
  const { markdown } = await renderConfigReference();
  const known = new Set([...markdown.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]));
  for (const s of [...APP, "migrate"]) {
    for (const name of Object.keys(services[s].environment)) expect(known, `${s}: ${name}`).toContain(name);
  }
});
