/**
 * `pnpm bench`: starts the stack (or uses a running one with --url), creates its own
 * organizations, runs the scenarios of issue 8 and prints one table row per figure, each with
 * the median over runs and its ratio to a baseline measured in the same run. Every scenario's
 * figures and raw samples go to `bench/results/<date>-<scenario>.json`.
 */
import { parseArgs } from "node:util";
import { Setup } from "./lib/org";
import { environment, renderTable, writeResult, RESULTS_DIR, type Figure } from "./lib/report";
import { STACK_SERVICES, type StackService } from "@chat/testkit";
import { remoteTarget, startTarget, type Target } from "./lib/target";
import { Calibrator } from "./lib/calibrate";
import { runBaselines } from "./scenarios/baselines";
import { runHistory } from "./scenarios/history";
import { runIdle } from "./scenarios/idle";
import { runPoll } from "./scenarios/poll";
import { runRegister } from "./scenarios/register";
import { runSend } from "./scenarios/send";

// Register runs before idle: both use the shared large organization, and idle adds a channel.
const SCENARIOS = ["baselines", "send", "register", "idle", "history", "poll"] as const;
type Scenario = (typeof SCENARIOS)[number];

const USAGE = `usage: pnpm bench [options]

  --full                 the issue's sizes (10,000 polls, 100,000 messages, longer phases)
  --quick                smaller sizes that finish in a few minutes (default)
  --only <list>          comma-separated: ${SCENARIOS.join(",")} (default: all)
  --runs <n>             measured runs per scenario; figures are their median (default 3)
  --seconds <n>          length of each timed load phase
  --subscribers <list>   send scenario subscriber counts (default 10,100)
  --senders <n>          concurrent senders (default 8)
  --rate <n>             offered msgs/s for the delivery-latency phase (default: half the
                         sustained rate measured just before, in the same run)
  --polls <n>            idle long polls (quick 1000, full 10000)
  --idle-http1           hold the idle polls over HTTP/1.1, a connection each (default: HTTP/2
                         streams over four connections, as the gateway sends them)
  --idle-users <n>       users owning those polls (default: min(polls, 1000); the rest are
                         extra queues of the same users, all reached by one channel message)
  --users <n>            register scenario organization size (default 1000)
  --channels <n>         register scenario channels (default 100)
  --messages <n>         history scenario channel size (quick 20000, full 100000)
  --url <gateway>        use a running stack (needs ACCOUNTS_URL, MESSAGING_URL, EVENTS_URL,
                         INTERNAL_TOKEN, DATABASE_URL, REDIS_URL, AMQP_URL in the environment)
  --profile <dir>        write V8 CPU profiles (--cpu-prof) of every service into <dir>
  --profile-services <list>  with --profile: only these services (comma-separated), so the
                         others run without the profiler's cost
  --results <dir>        where the JSON files go (default bench/results)
  --stack-logs           mirror the services' output (warnings and errors) to stderr
  --pg-socket <dir>      the services it starts reach PostgreSQL through its Unix socket in
                         <dir> (e.g. /var/run/postgresql), as on a host that runs both
  --env NAME=VALUE       a setting for every service it starts, over the bench's own
                         (repeatable; e.g. --env AMQP_PUBLISH_BATCHES=false to compare)

  BENCH_NODE_OPTIONS in the environment adds Node flags to every service it starts (for
  trying a deployment's NODE_OPTIONS, such as --max-semi-space-size=64);
  BENCH_NODE_OPTIONS_<SERVICE> (BENCH_NODE_OPTIONS_GATEWAY, ...) to one of them.
`;

function parse() {
  const { values } = parseArgs({
    options: {
      full: { type: "boolean", default: false },
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      runs: { type: "string" },
      seconds: { type: "string" },
      subscribers: { type: "string" },
      senders: { type: "string" },
      rate: { type: "string" },
      polls: { type: "string" },
      "idle-users": { type: "string" },
      "idle-http1": { type: "boolean", default: false },
      users: { type: "string" },
      channels: { type: "string" },
      messages: { type: "string" },
      url: { type: "string" },
      profile: { type: "string" },
      "profile-services": { type: "string" },
      results: { type: "string" },
      "stack-logs": { type: "boolean", default: false },
      env: { type: "string", multiple: true },
      "pg-socket": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const int = (v: string | undefined, def: number) => {
    if (v === undefined) return def;
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`expected a positive integer, got "${v}"`);
    return n;
  };
  const full = values.full;
  const picked = values.only ? (values.only.split(",").map((s) => s.trim()) as Scenario[]) : [...SCENARIOS];
  for (const s of picked) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario "${s}" (one of ${SCENARIOS.join(", ")})`);
  const only = SCENARIOS.filter((s) => picked.includes(s));
  const polls = int(values.polls, full ? 10_000 : 1_000);
  if (values.url && values.env?.length) throw new Error("--env applies to a stack the bench starts, not to one given by --url");
  const profileServices = values["profile-services"]?.split(",").map((x) => x.trim());
  for (const s of profileServices ?? []) {
    if (!(STACK_SERVICES as readonly string[]).includes(s)) throw new Error(`unknown service "${s}" (one of ${STACK_SERVICES.join(", ")})`);
  }
  if (profileServices && !values.profile) throw new Error("--profile-services needs --profile <dir>");
  if (values.url && values["pg-socket"]) throw new Error("--pg-socket applies to a stack the bench starts, not to one given by --url");
  return {
    full,
    only,
    runs: int(values.runs, full ? 5 : 3),
    seconds: int(values.seconds, full ? 20 : 5),
    subscribers: (values.subscribers ?? "10,100").split(",").map((s) => int(s, 10)),
    senders: int(values.senders, 8),
    rate: values.rate === undefined ? undefined : int(values.rate, 500),
    polls,
    idleUsers: int(values["idle-users"], Math.min(polls, 1000)),
    idleHttp1: values["idle-http1"],
    users: int(values.users, 1000),
    channels: int(values.channels, 100),
    messages: int(values.messages, full ? 100_000 : 20_000),
    url: values.url,
    profile: values.profile,
    profileServices: profileServices as StackService[] | undefined,
    results: values.results ?? RESULTS_DIR,
    stackLogs: values["stack-logs"],
    pgSocket: values["pg-socket"],
    env: Object.fromEntries(
      (values.env ?? []).map((pair) => {
        const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
        if (!m) throw new Error(`expected --env NAME=VALUE, got "${pair}"`);
        return [m[1], m[2]];
      }),
    ),
  };
}

const log = (s: string) => process.stderr.write(`${s}\n`);

async function main() {
  let opts: ReturnType<typeof parse>;
  try {
    opts = parse();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (opts.stackLogs) process.env.STACK_LOGS = "1";
  const started = Date.now();
  log(`bench: ${opts.full ? "full" : "quick"} sizes, ${opts.runs} runs, scenarios ${opts.only.join(", ")}`);
  log(opts.url ? `bench: using the stack at ${opts.url}` : "bench: starting the stack (migrations, five services)...");
  for (const [name, value] of Object.entries(opts.env)) log(`bench: ${name}=${value}`);
  if (opts.pgSocket) log(`bench: the services reach PostgreSQL through its socket in ${opts.pgSocket}`);
  const target: Target = opts.url ? remoteTarget(opts.url) : await startTarget({ profileDir: opts.profile, profileServices: opts.profileServices, env: opts.env, pgSocketDir: opts.pgSocket });
  const setup = new Setup(target);
  let calib: Calibrator | null = null;
  const stopping = async () => {
    await calib?.stop().catch(() => {});
    await setup.close().catch(() => {});
    await target.stop().catch(() => {});
  };
  process.once("SIGINT", () => void stopping().then(() => process.exit(130)));

  const all: Figure[] = [];
  const files: string[] = [];
  const record = (scenario: string, figures: Figure[], raw: unknown, extra: Record<string, unknown> = {}) => {
    all.push(...figures);
    files.push(writeResult(scenario, { options: opts, figures, raw, ...extra }, opts.results));
    process.stdout.write(`\n${renderTable(figures)}\n`);
  };

  try {
    if (opts.only.includes("baselines")) {
      log("bench: baselines");
      const baselines = await runBaselines(target, { runs: opts.runs, seconds: Math.min(opts.seconds, 5), concurrency: opts.senders }, log);
      record("baselines", baselines.figures, baselines.raw);
    }
    // The short baseline taken next to every measured run (see lib/calibrate.ts).
    calib = await Calibrator.start(target.vars.DATABASE_URL, opts.senders);
    for (const scenario of opts.only) {
      const t = Date.now();
      if (scenario === "send") {
        for (const S of opts.subscribers) {
          log(`bench: send, S=${S}`);
          const r = await runSend(setup, { subscribers: S, senders: opts.senders, runs: opts.runs, seconds: opts.seconds, rate: opts.rate, drainSeconds: 15 }, calib, log);
          record(`send-s${S}`, r.figures, r.raw);
        }
      } else if (scenario === "idle") {
        log(`bench: idle, C=${opts.polls}`);
        const r = await runIdle(setup, { polls: opts.polls, users: opts.idleUsers, runs: opts.runs, http1: opts.idleHttp1 }, calib, log);
        record("idle", r.figures, r.raw);
      } else if (scenario === "register") {
        log(`bench: register, ${opts.users} users, ${opts.channels} channels`);
        const r = await runRegister(setup, { users: opts.users, channels: opts.channels, messages: 500, requests: opts.full ? 500 : 200, runs: opts.runs }, calib, log);
        record("register", r.figures, r.raw);
      } else if (scenario === "history") {
        log(`bench: history, ${opts.messages} messages`);
        const r = await runHistory(setup, { messages: opts.messages, subscribers: 5, requests: opts.full ? 100 : 30, runs: opts.runs }, calib, log);
        record("history", r.figures, r.raw);
      } else if (scenario === "poll") {
        log("bench: poll");
        const r = await runPoll(setup, { queues: 50, rounds: opts.full ? 10 : 4, runs: opts.runs }, calib, log);
        record("poll", r.figures, r.raw);
      }
      if (scenario !== "baselines") log(`bench: ${scenario} took ${((Date.now() - t) / 1000).toFixed(0)} s`);
    }
  } finally {
    await stopping();
  }
  const env = environment();
  process.stdout.write(`\n## All figures (median of ${opts.runs} runs; node ${env.node}, ${env.cpus} cpus, load average at end ${env.load_average_at_start.join(" ")})\n\n`);
  process.stdout.write(`${renderTable(all)}\n\n`);
  process.stdout.write(`results: ${files.join(", ")}\n`);
  log(`bench: done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
