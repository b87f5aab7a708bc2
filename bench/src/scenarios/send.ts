import { randomBytes } from "node:crypto";
import type { Caller } from "../lib/http";
import { createPool, expectOk } from "../lib/http";
import { closedLoop, openLoop, type LoopResult } from "../lib/load";
import type { Setup } from "../lib/org";
import { Poller } from "../lib/poller";
import { cpuWindow, type CpuReport } from "../lib/procs";
import { figure, type Figure } from "../lib/report";
import { sleep, summarize, type LatencySummary } from "../lib/stats";
import type { Baselines } from "./baselines";

/**
 * Scenario 1: concurrent senders post to a channel whose S subscribers each hold a long poll
 * through the gateway. Two phases per run: a closed loop (sustained throughput) and an open
 * loop at a fixed rate (end-to-end delivery latency at that rate). Every delivery is matched
 * to its send, so lost and duplicated events are counted exactly.
 */

export interface SendOptions {
  subscribers: number;
  senders: number;
  runs: number;
  seconds: number;
  /** Offered rate of the latency phase (the issue: half of the 1,000 msgs/s target). */
  rate: number;
  /** How long to wait for stragglers after the last send before counting them lost. */
  drainSeconds: number;
}

interface PhaseResult {
  sends: LoopResult & { skipped?: number };
  throughput: number;
  sendLatency: LatencySummary;
  delivery: LatencySummary;
  expected: number;
  lost: number;
  duplicated: number;
  /** Deliveries of messages whose send reported an error (stored after all, e.g. a timeout). */
  unexpected: number;
  cpu: CpuReport;
}

/** Per-run tracking: send start times and who received what. */
class Tracker {
  readonly tag = randomBytes(3).toString("hex");
  readonly started: number[] = [];
  readonly succeeded: boolean[] = [];
  private readonly seen: Array<Uint8Array> = [];
  readonly latencies: number[] = [];
  duplicated = 0;
  unique = 0;
  unexpected = 0;
  private capacity = 1 << 16;
  /** Deliveries that arrived before their send's answer, by seq. */
  private readonly early = new Map<number, number>();
  private readonly re: RegExp;

  constructor(readonly subscribers: number) {
    for (let i = 0; i < subscribers; i++) this.seen.push(new Uint8Array(this.capacity));
    this.re = new RegExp(`^bench ${this.tag} (\\d+)$`);
  }

  content(seq: number): string {
    return `bench ${this.tag} ${seq}`;
  }

  receive(subscriber: number, event: any, at: number): void {
    if (event.type !== "message") return;
    const m = this.re.exec(event.message?.content ?? "");
    if (!m) return; // an earlier run's straggler
    const seq = Number(m[1]);
    while (seq >= this.capacity) this.grow();
    const seen = this.seen[subscriber];
    if (seen[seq]) {
      this.duplicated++;
      return;
    }
    seen[seq] = 1;
    const ok = this.succeeded[seq];
    if (ok === false) {
      this.unexpected++;
      return;
    }
    // Counted at once even when the send's answer is still on its way (the event can win).
    this.unique++;
    this.latencies.push(at - this.started[seq]);
    if (ok === undefined) this.early.set(seq, (this.early.get(seq) ?? 0) + 1);
  }

  /** Records a send's outcome; deliveries of a failed send move from delivered to unexpected. */
  settle(seq: number, ok: boolean): void {
    this.succeeded[seq] = ok;
    const early = this.early.get(seq);
    if (early === undefined) return;
    this.early.delete(seq);
    if (!ok) {
      this.unique -= early;
      this.unexpected += early;
    }
  }

  private grow(): void {
    this.capacity *= 2;
    for (let i = 0; i < this.seen.length; i++) {
      const next = new Uint8Array(this.capacity);
      next.set(this.seen[i]);
      this.seen[i] = next;
    }
  }
}

export async function runSend(
  setup: Setup,
  opts: SendOptions,
  baselines: Baselines | null,
  log: (s: string) => void,
): Promise<{ figures: Figure[]; raw: unknown }> {
  const S = opts.subscribers;
  const K = Math.min(opts.senders, S);
  log(`  send S=${S}: creating ${S} users and the channel`);
  const org = await setup.createOrg(`send${S}`, S);
  const channel = `bench-send-${S}`;
  const ids = await setup.createChannels(org, [channel], org.users.map((u) => u.userId));
  const streamId = ids.get(channel)!;

  const pollPool = createPool(setup.target.gatewayUrl, { connections: S });
  const sendPool = createPool(setup.target.gatewayUrl, { connections: K });
  const pollers: Poller[] = [];
  let tracker = new Tracker(S);
  try {
    for (let i = 0; i < S; i++) {
      const client = setup.gateway(org.users[i], pollPool);
      const reg = expectOk(await setup.gateway(org.users[i]).post("/register", { event_types: ["message"], apply_markdown: false }), "POST /register") as {
        queue_id: string;
        last_event_id: number;
      };
      const poller = new Poller(client, reg.queue_id, reg.last_event_id, (event, at) => tracker.receive(i, event, at));
      pollers.push(poller);
      poller.start();
    }
    const senders: Caller[] = org.users.slice(0, K).map((u) => setup.gateway(u, sendPool));
    const send = async (worker: number, seq: number): Promise<string | null> => {
      const t = tracker;
      t.started[seq] = performance.now();
      let r;
      try {
        r = await senders[worker % K].post("/messages", { type: "stream", to: streamId, topic: "bench", content: t.content(seq) });
      } catch (err) {
        t.settle(seq, false);
        throw err;
      }
      const ok = r.status === 200 && r.body?.result === "success";
      t.settle(seq, ok);
      return ok ? null : `HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
    };
    // Warm-up: JIT, pools, the auth cache; not measured.
    await closedLoop(K, 2000, send);
    await drain(tracker, S, opts.drainSeconds);

    const throughputRuns: PhaseResult[] = [];
    const rateRuns: PhaseResult[] = [];
    for (let run = 0; run < opts.runs; run++) {
      tracker = new Tracker(S);
      throughputRuns.push(await phase(setup, tracker, S, opts.drainSeconds, () => closedLoop(K, opts.seconds * 1000, send)));
      log(`  send S=${S} run ${run + 1}: ${throughputRuns[run].throughput.toFixed(0)} msgs/s closed loop, lost ${throughputRuns[run].lost}`);
      tracker = new Tracker(S);
      rateRuns.push(await phase(setup, tracker, S, opts.drainSeconds, () => openLoop(opts.rate, opts.seconds * 1000, 256, (seq) => send(seq % K, seq))));
      const r = rateRuns[run];
      log(`  send S=${S} run ${run + 1}: at ${opts.rate}/s offered, delivery p99 ${r.delivery.p99.toFixed(1)} ms, lost ${r.lost}`);
    }
    const pollErrors = pollers.reduce((n, p) => n + p.stats.errors, 0);
    const pollErrorSamples = pollers.flatMap((p) => p.stats.errorSamples).slice(0, 5);
    return {
      figures: sendFigures(S, K, opts, throughputRuns, rateRuns, baselines, pollErrors),
      raw: { subscribers: S, senders: K, options: opts, throughput_runs: throughputRuns.map(strip), rate_runs: rateRuns.map(strip), poll_errors: pollErrors, poll_error_samples: pollErrorSamples },
    };
  } finally {
    await Promise.all(pollers.map((p) => p.stop()));
    await Promise.all([pollPool.destroy(), sendPool.close()]);
  }
}

async function phase(setup: Setup, tracker: Tracker, S: number, drainSeconds: number, load: () => Promise<LoopResult & { skipped?: number }>): Promise<PhaseResult> {
  const cpu = cpuWindow(setup.target.pids());
  const sends = await load();
  const cpuReport = cpu.stop();
  await drain(tracker, S, drainSeconds);
  const okSends = tracker.succeeded.filter(Boolean).length;
  const expected = okSends * S;
  return {
    sends,
    throughput: sends.ok / sends.seconds,
    sendLatency: summarize(sends.latencies),
    delivery: summarize(tracker.latencies),
    expected,
    lost: expected - tracker.unique,
    duplicated: tracker.duplicated,
    unexpected: tracker.unexpected,
    cpu: cpuReport,
  };
}

/** Waits until every successful send reached every subscriber, or the drain time ran out. */
async function drain(tracker: Tracker, S: number, seconds: number): Promise<void> {
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    if (tracker.unique >= tracker.succeeded.filter(Boolean).length * S) return;
    await sleep(50);
  }
}

function strip(p: PhaseResult) {
  const { latencies: _l, ...sends } = p.sends;
  return { ...p, sends };
}

function sendFigures(S: number, K: number, opts: SendOptions, tp: PhaseResult[], rate: PhaseResult[], b: Baselines | null, pollErrors: number): Figure[] {
  const sc = `send S=${S}`;
  const http = b && { name: `bare fastify, ${K} clients`, value: b.httpRequestsPerSecond, unit: "req/s" };
  const pgB = b && { name: "PostgreSQL commits", value: b.pgCommitsPerSecond, unit: "rows/s" };
  const lat = b && { name: "bare fastify p50", value: b.httpP50Ms, unit: "ms" };
  const lat99 = b && { name: "bare fastify p99", value: b.httpP99Ms, unit: "ms" };
  const tenTarget = S === 10;
  return [
    figure(sc, `sustained sends, ${K} senders (closed loop)`, "msgs/s", tp.map((r) => r.throughput), {
      target: tenTarget ? { op: ">=", value: 1000 } : undefined,
      baseline: pgB ?? undefined,
    }),
    figure(sc, "  same, vs bare HTTP", "msgs/s", tp.map((r) => r.throughput), { baseline: http ?? undefined }),
    figure(sc, "send latency p50 (closed loop)", "ms", tp.map((r) => r.sendLatency.p50), { baseline: lat ?? undefined }),
    figure(sc, "send latency p99 (closed loop)", "ms", tp.map((r) => r.sendLatency.p99), { baseline: lat99 ?? undefined }),
    figure(sc, "delivery latency p50 (closed loop)", "ms", tp.map((r) => r.delivery.p50), { baseline: lat ?? undefined }),
    figure(sc, "delivery latency p99 (closed loop)", "ms", tp.map((r) => r.delivery.p99), { baseline: lat99 ?? undefined }),
    figure(sc, "lost + duplicated events (closed loop)", "events", tp.map((r) => r.lost + r.duplicated), { target: { op: "=", value: 0 } }),
    figure(sc, `achieved rate at ${opts.rate}/s offered (open loop)`, "msgs/s", rate.map((r) => r.sends.ok / opts.seconds)),
    figure(sc, `send latency p50 at ${opts.rate}/s`, "ms", rate.map((r) => r.sendLatency.p50), { baseline: lat ?? undefined }),
    figure(sc, `send latency p99 at ${opts.rate}/s`, "ms", rate.map((r) => r.sendLatency.p99), { baseline: lat99 ?? undefined }),
    figure(sc, `delivery latency p50 at ${opts.rate}/s`, "ms", rate.map((r) => r.delivery.p50), { baseline: lat ?? undefined }),
    figure(sc, `delivery latency p99 at ${opts.rate}/s`, "ms", rate.map((r) => r.delivery.p99), {
      target: tenTarget ? { op: "<", value: 100 } : undefined,
      baseline: lat99 ?? undefined,
    }),
    figure(sc, `delivery latency max at ${opts.rate}/s`, "ms", rate.map((r) => r.delivery.max)),
    figure(sc, `lost + duplicated events at ${opts.rate}/s`, "events", rate.map((r) => r.lost + r.duplicated), { target: { op: "=", value: 0 } }),
    figure(sc, "send errors (both phases)", "requests", tp.map((r, i) => r.sends.errors + rate[i].sends.errors + (rate[i].sends.skipped ?? 0)), {
      note: pollErrors ? `${pollErrors} poll errors` : undefined,
    }),
    figure(sc, "load generator CPU (closed loop)", "cores", tp.map((r) => r.cpu.loadGenCores)),
    figure(sc, "machine CPU busy (closed loop)", "share", tp.map((r) => r.cpu.machineBusy)),
  ];
}
