/**
 * Generates docs/configuration.md from the services' zod config shapes (names, defaults, types)
 * and the doc comments beside each variable, so the reference cannot drift from the code.
 *   pnpm docs:config           rewrite the file
 *   pnpm docs:config --check   exit 1 when the file is stale
 * test/deploy/config-docs.test.ts runs the check.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { baseConfigShape } from "@chat/platform";
import { cliConfigShape, startConfigShape } from "../lib/config";
import { REPO_ROOT } from "../lib/migrate";

export const CONFIG_DOC = path.join(REPO_ROOT, "docs", "configuration.md");
const SERVICES = ["gateway", "accounts", "messaging", "events", "scheduler"] as const;

/** Meanings of the variables whose shapes carry no doc comment. */
const FALLBACK: Record<string, string> = {
  NODE_ENV: "Runtime mode; `production` in images.",
  LOG_LEVEL: "Least severe log level written (JSON lines on stdout, with the request id).",
  HOST: "Interface the HTTP server binds; `0.0.0.0` in containers.",
  PORT: "Port the HTTP server listens on.",
  DATABASE_URL:
    "PostgreSQL connection URL as libpq and pg read it, a Unix socket directory as the host or in a `host` parameter included (deployment.md). Each service keeps its tables in its own schema of this database.",
  DATABASE_POOL_SIZE:
    "Connections each accounts, messaging and scheduler process keeps open to PostgreSQL (the gateway and events open none). All but a quarter of them (the quarter rounded up; at least one) may hold transactions at once, 7 of the default 10; a transaction beyond that waits for a slot as for a connection. The rest stay free for the reads code in a transaction makes through the pool, so a burst of requests waiting on one row's lock cannot take every connection from the request holding it.",
  REDIS_URL: "Redis connection URL (`rediss://` for TLS).",
  AMQP_URL: "RabbitMQ connection URL (`amqps://` for TLS).",
  AMQP_EXCHANGE: "Topic exchange the domain events are published to.",
  INTERNAL_TOKEN: "Shared secret on every service-to-service request, and the key temporary upload URLs are signed with. Set the same long random value everywhere; the default is for development only.",
  ACCOUNTS_URL: "Base URL of the accounts service.",
  MESSAGING_URL: "Base URL of the messaging service.",
  EVENTS_URL: "Base URL of the events service.",
  SCHEDULER_URL: "Base URL of the scheduler service.",
  PUSH_NOTIFICATIONS_ENABLED: "Reported as `push_notifications_enabled` by `GET /server_settings`.",
  S3_REGION: "Region of the S3 bucket.",
  S3_SECRET_ACCESS_KEY: "Secret key belonging to `S3_ACCESS_KEY_ID`.",
};

type Shape = Record<string, z.ZodType>;

interface Row {
  name: string;
  default: string;
  type: string;
  meaning: string;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) walk(full, out);
    else if (full.endsWith(".ts") && !full.endsWith(".test.ts")) out.push(full);
  }
  return out;
}

/** `/** text *\/ NAME:` pairs from source files; the first file listed wins. */
function docComments(files: string[]): Map<string, string> {
  const found = new Map<string, string>();
  const pattern = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*\n\s*([A-Z][A-Z0-9_]+)\s*:/g;
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(pattern)) {
      const comment = m[1]
        .split("\n")
        .map((l) => l.replace(/^\s*\*\s?/, "").trim())
        .filter(Boolean)
        .join(" ");
      if (!found.has(m[2])) found.set(m[2], comment);
    }
  }
  return found;
}

function describeType(schema: z.ZodType): { type: string; def: string } {
  const js = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, any>;
  let type: string;
  const isBool = Array.isArray(js.enum) && ["true", "false", "1", "0", "yes", "no"].every((v) => js.enum.includes(v));
  if (isBool) type = "boolean (`true`/`false`, `1`/`0`, `yes`/`no`)";
  else if (Array.isArray(js.enum)) type = `one of ${js.enum.map((v: unknown) => `\`${v}\``).join(", ")}`;
  else if (js.format === "uri") type = "URL";
  else {
    type = js.type === "integer" ? "integer" : js.type === "number" ? "number" : js.type === "string" ? "string" : String(js.type ?? "string");
    const bounds: string[] = [];
    if (js.minimum !== undefined) bounds.push(`>= ${js.minimum}`);
    if (js.exclusiveMinimum !== undefined) bounds.push(`> ${js.exclusiveMinimum}`);
    if (js.maximum !== undefined && js.maximum < Number.MAX_SAFE_INTEGER) bounds.push(`<= ${js.maximum}`);
    if (js.minLength === 1) bounds.push("non-empty");
    else if (js.minLength !== undefined) bounds.push(`at least ${js.minLength} characters`);
    if (bounds.length) type += `, ${bounds.join(", ")}`;
  }
  const parsed = schema.safeParse(undefined);
  const def = !parsed.success ? "(required)" : parsed.data === undefined ? "(unset)" : `\`${parsed.data === "" ? '""' : String(parsed.data)}\``;
  return { type, def };
}

function rows(shape: Shape, names: string[], comments: Map<string, string>): Row[] {
  return names.map((name) => {
    const { type, def } = describeType(shape[name]);
    // A limit's window shares the comment of its `_MAX` sibling.
    const windowOf = name.endsWith("_WINDOW_SECONDS") && shape[name.replace(/_WINDOW_SECONDS$/, "_MAX")] ? name.replace(/_WINDOW_SECONDS$/, "_MAX") : null;
    const meaning = comments.get(name) ?? FALLBACK[name] ?? (windowOf ? `Window of \`${windowOf}\`, in seconds.` : "");
    return { name, default: def, type, meaning };
  });
}

function table(list: Row[]): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  return [
    "| variable | default | type | meaning |",
    "|---|---|---|---|",
    ...list.map((r) => `| \`${r.name}\` | ${esc(r.default)} | ${esc(r.type)} | ${esc(r.meaning)} |`),
  ].join("\n");
}

/**
 * Every service's variables: the union of the `*ConfigShape` objects its source exports
 * (`config.ts` first; features such as attachments keep their own shape beside it).
 */
async function serviceShapes(): Promise<Record<string, Shape>> {
  const shapes: Record<string, Shape> = {};
  for (const s of SERVICES) {
    const dir = path.join(REPO_ROOT, "services", s, "src");
    const files = walk(dir).sort((a, b) => Number(b.endsWith(`${path.sep}config.ts`)) - Number(a.endsWith(`${path.sep}config.ts`)));
    const merged: Shape = {};
    for (const file of files) {
      if (!/export const \w+ConfigShape\s*=/.test(readFileSync(file, "utf8"))) continue;
      const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod)) {
        if (name.endsWith("ConfigShape")) for (const [k, v] of Object.entries(value as Shape)) merged[k] ??= v;
      }
    }
    if (!Object.keys(merged).length) throw new Error(`services/${s}/src exports no *ConfigShape`);
    shapes[s] = merged;
  }
  return shapes;
}

export interface ConfigReference {
  markdown: string;
  /** Variables without a meaning: each needs a doc comment in its shape. */
  undocumented: string[];
}

export async function renderConfigReference(): Promise<ConfigReference> {
  const shapes = await serviceShapes();
  const platformFiles = walk(path.join(REPO_ROOT, "packages", "platform", "src"));
  const undocumented: string[] = [];
  const track = (list: Row[], where: string) => {
    for (const r of list) if (!r.meaning) undocumented.push(`${where}: ${r.name}`);
    return list;
  };
  const base = baseConfigShape as unknown as Shape;
  const baseComments = docComments(platformFiles);
  const out: string[] = [
    "# Configuration reference",
    "",
    "<!-- Generated by `pnpm docs:config` from the services' config schemas; do not edit by hand. -->",
    "",
    "Every service reads its settings from environment variables, checked at start: a wrong value",
    "stops the process with a message naming the variable. Booleans accept `true`/`false`,",
    "`1`/`0` or `yes`/`no`. In Kubernetes the shared ones live in the ConfigMap `chat-config`",
    "and the secret ones (`DATABASE_URL`, `REDIS_URL`, `AMQP_URL`, `INTERNAL_TOKEN`) in the",
    "Secret `chat-secrets`; docker-compose sets them in `docker-compose.yml`.",
    "",
    "## Every service",
    "",
    table(track(rows(base, Object.keys(base), baseComments), "every service")),
  ];
  for (const s of SERVICES) {
    const shape = shapes[s];
    const comments = docComments([...walk(path.join(REPO_ROOT, "services", s, "src")), ...platformFiles]);
    const own = Object.keys(shape).filter((k) => !(k in base) || shape[k] !== base[k]);
    out.push("", `## ${s}`, "", `Besides the variables of every service:`, "", table(track(rows(shape, own, comments), s)));
  }
  const scriptComments = docComments(walk(path.join(REPO_ROOT, "scripts")));
  const cli = cliConfigShape as unknown as Shape;
  const start = startConfigShape as unknown as Shape;
  out.push(
    "",
    "## Admin CLI (`pnpm chat`, `chat` in the images)",
    "",
    table(track(rows(cli, Object.keys(cli), new Map([...scriptComments, ...baseComments])), "cli")),
    "",
    "## `pnpm start`",
    "",
    "It passes its environment on to the five services and the demo, and reads:",
    "",
    table(track(rows(start, Object.keys(start), scriptComments), "start")),
    "",
  );
  return { markdown: out.join("\n"), undocumented };
}

async function main() {
  const { markdown, undocumented } = await renderConfigReference();
  if (undocumented.length) {
    process.stderr.write(`These variables have no doc comment in their config shape:\n  ${undocumented.join("\n  ")}\n`);
    process.exitCode = 1;
  }
  if (process.argv.includes("--check")) {
    const current = readFileSync(CONFIG_DOC, "utf8");
    if (current !== markdown) {
      process.stderr.write("docs/configuration.md is stale: run `pnpm docs:config`\n");
      process.exitCode = 1;
    }
    return;
  }
  writeFileSync(CONFIG_DOC, markdown);
  process.stderr.write(`wrote ${path.relative(process.cwd(), CONFIG_DOC)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
