import os from "node:os";
import { randomBytes } from "node:crypto";
import type { Caller } from "../lib/http";
import { createPool, expectOk } from "../lib/http";
import { closedLoop, openLoop, type LoopResult } from "../lib/load";
import { histogramBuckets, metricSums, quantileBetween } from "../lib/metrics";
import type { Setup } from "../lib/org";
import { Poller } from "../lib/poller";
import type { CpuReport } from "../lib/procs";
import { figure, type Figure } from "../lib/report";
import { sleep, summarize, type LatencySummary } from "../lib/stats";
import { calibrate, paired, type Calibration, type Calibrator } from "../lib/calibrate";

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
  /**
   * Offered rate of the latency phase. Unset: half the sustained rate just measured in the same
   * run (the "at half that rate"); offering more than the system sustains would only
   * measure queueing.
   */
  rate?: number;
  /** How long to wait for stragglers after the last send before counting them lost. */
  drainSeconds: number;
}

interface PhaseResult {
  /** Offered rate of an open-loop phase. */
  rate?: number;
  sends: LoopResult & { skipped?: number };
  throughput: number;
  sendLatency: LatencySummary;
  delivery: LatencySummary;
  expected: number;
  lost: number;
  duplicated: number;
  /** Deliveries of messages whose send reported an error (stored after all, e.g. a timeout). */
  unexpected: number;
  /** Events a subscriber's answered poll carried, on average (1 = every event cost a poll). */
  eventsPerPoll: number;
  /** Events per batch messaging's outbox relay published (one confirm and one mark each). */
  relayBatch: number;
  /** Events per broker message messaging published (more than one with AMQP_PUBLISH_BATCHES). */
  brokerMessage: number;
  /**
   * The events service's `events_delivery_lag_seconds` over the phase (event made -> in the
   * queues), p50 and p99 in ms, interpolated in its buckets: the server's part of the delivery.
   */
  serverLag: { p50: number; p99: number };
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
  calib: Calibrator | null,
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
    // Warm-up: JIT, pools, the auth cache, PostgreSQL's plans; not measured. Two seconds left the
    // first measured run 20-30% slower than the others; eight give runs alike.
    await closedLoop(K, 8000, send);
    await drain(tracker, S, opts.drainSeconds);

    await setup.target.profileStart();
    const throughputRuns: PhaseResult[] = [];
    const rateRuns: PhaseResult[] = [];
    const cals: Calibration[] = [];
    for (let run = 0; run < opts.runs; run++) {
      cals.push(await calibrate(calib));
      tracker = new Tracker(S);
      throughputRuns.push(await phase(setup, tracker, pollers, opts.drainSeconds, () => closedLoop(K, opts.seconds * 1000, send)));
      log(`  send S=${S} run ${run + 1}: ${throughputRuns[run].throughput.toFixed(0)} msgs/s closed loop, lost ${throughputRuns[run].lost}`);
      tracker = new Tracker(S);
      const rate = opts.rate ?? Math.max(1, Math.round(throughputRuns[run].throughput / 2));
      rateRuns.push({ ...(await phase(setup, tracker, pollers, opts.drainSeconds, () => openLoop(rate, opts.seconds * 1000, 256, (seq) => send(seq % K, seq)))), rate });
      const r = rateRuns[run];
      log(`  send S=${S} run ${run + 1}: at ${rate}/s offered, delivery p99 ${r.delivery.p99.toFixed(1)} ms, lost ${r.lost}`);
    }
    await setup.target.profileStop(`send-s${S}`);
    const pollErrors = pollers.reduce((n, p) => n + p.stats.errors, 0);
    const pollErrorSamples = pollers.flatMap((p) => p.stats.errorSamples).slice(0, 5);
    return {
      figures: sendFigures(S, K, opts, throughputRuns, rateRuns, cals, pollErrors),
      raw: { subscribers: S, senders: K, options: opts, calibrations: cals, throughput_runs: throughputRuns.map(strip), rate_runs: rateRuns.map(strip), poll_errors: pollErrors, poll_error_samples: pollErrorSamples },
    };
  } finally {
    await Promise.all(pollers.map((p) => p.stop()));
    await Promise.all([pollPool.destroy(), sendPool.close()]);
  }
}

async function phase(setup: Setup, tracker: Tracker, pollers: Poller[], drainSeconds: number, load: () => Promise<LoopResult & { skipped?: number }>): Promise<PhaseResult> {
  const S = pollers.length;
  const count = () => pollers.reduce((a, p) => ({ polls: a.polls + p.stats.polls, events: a.events + p.stats.events }), { polls: 0, events: 0 });
  const before = count();
  const relayBefore = await relayTotals(setup);
  const lagBefore = await lagBuckets(setup);
  const cpu = setup.cpuWindow();
  const sends = await load();
  const cpuReport = cpu.stop();
  await drain(tracker, S, drainSeconds);
  const after = count();
  const relayAfter = await relayTotals(setup);
  const lagAfter = await lagBuckets(setup);
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
    eventsPerPoll: (after.events - before.events) / Math.max(1, after.polls - before.polls),
    relayBatch: (relayAfter.events - relayBefore.events) / (relayAfter.batches - relayBefore.batches),
    brokerMessage: (relayAfter.events - relayBefore.events) / (relayAfter.messages - relayBefore.messages),
    serverLag: { p50: quantileBetween(lagBefore, lagAfter, 0.5) * 1000, p99: quantileBetween(lagBefore, lagAfter, 0.99) * 1000 },
    cpu: cpuReport,
  };
}

/**
 * Messaging's relay so far, from its `/metrics` (NaN figures when it cannot be read): events
 * published, batches (one confirm and one mark each) and broker messages.
 */
async function relayTotals(setup: Setup): Promise<{ events: number; batches: number; messages: number }> {
  const schema = { schema: "messaging" };
  const [events, batches, messages] = await metricSums(setup.target.urls.messaging, [
    ["outbox_publish_batch_size_sum", schema],
    ["outbox_publish_batch_size_count", schema],
    ["amqp_published_messages_total", {}],
  ]).catch(() => [NaN, NaN, NaN]);
  return { events, batches, messages };
}

/** The events service's delivery lag histogram so far (empty when it cannot be read). */
function lagBuckets(setup: Setup): Promise<Array<{ le: number; count: number }>> {
  return histogramBuckets(setup.target.urls.events, "events_delivery_lag_seconds").catch(() => []);
}

/** Waits until every successful send reached every subscriber, or the drain time ran out. */
async function drain(tracker: Tracker, S: number, seconds: number): Promise<void> {
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    if (tracker.unique >= tracker.succeeded.filter(Boolean).length * S) return;
    await sleep(50);
  }
}

/** CPU milliseconds a service spent per successful send over the phase. */
function cpuPerMessage(p: PhaseResult, service: string): number {
  return ((p.cpu.services[service] ?? NaN) * p.cpu.wallSeconds * 1000) / Math.max(1, p.sends.ok);
}

function strip(p: PhaseResult) {
  const { latencies: _l, ...sends } = p.sends;
  return { ...p, sends };
}

function sendFigures(S: number, K: number, opts: SendOptions, tp: PhaseResult[], rate: PhaseResult[], cals: Calibration[], pollErrors: number): Figure[] {
  const sc = `send S=${S}`;
  const http = paired.rps(cals, K);
  const pgB = paired.pg(cals);
  const lat = paired.p50(cals);
  const lat99 = paired.p99(cals);
  const tenTarget = S === 10;
  const at = opts.rate ? `at ${opts.rate}/s` : "at half the sustained rate";
  return [
    figure(sc, `sustained sends, ${K} senders (closed loop)`, "msgs/s", tp.map((r) => r.throughput), {
      target: tenTarget ? { op: ">=", value: 1000 } : undefined,
      baseline: pgB,
    }),
    figure(sc, "  same, vs bare HTTP", "msgs/s", tp.map((r) => r.throughput), { baseline: http }),
    figure(sc, "send latency p50 (closed loop)", "ms", tp.map((r) => r.sendLatency.p50), { baseline: lat }),
    figure(sc, "send latency p99 (closed loop)", "ms", tp.map((r) => r.sendLatency.p99), { baseline: lat99 }),
    figure(sc, "delivery latency p50 (closed loop)", "ms", tp.map((r) => r.delivery.p50), { baseline: lat }),
    figure(sc, "delivery latency p99 (closed loop)", "ms", tp.map((r) => r.delivery.p99), { baseline: lat99 }),
    figure(sc, "lost + duplicated events (closed loop)", "events", tp.map((r) => r.lost + r.duplicated), { target: { op: "=", value: 0 } }),
    figure(sc, "events per answered poll (closed loop)", "events", tp.map((r) => r.eventsPerPoll)),
    figure(sc, "events per relay batch, messaging (closed loop)", "events", tp.map((r) => r.relayBatch)),
    figure(sc, "events per broker message, messaging (closed loop)", "events", tp.map((r) => r.brokerMessage)),
    figure(sc, `offered rate (open loop, ${at})`, "msgs/s", rate.map((r) => r.rate ?? NaN)),
    figure(sc, "achieved rate (open loop)", "msgs/s", rate.map((r) => r.sends.ok / r.sends.seconds)),
    figure(sc, `send latency p50 ${at}`, "ms", rate.map((r) => r.sendLatency.p50), { baseline: lat }),
    figure(sc, `send latency p99 ${at}`, "ms", rate.map((r) => r.sendLatency.p99), { baseline: lat99 }),
    figure(sc, `delivery latency p50 ${at}`, "ms", rate.map((r) => r.delivery.p50), { baseline: lat }),
    figure(sc, `delivery latency p99 ${at}`, "ms", rate.map((r) => r.delivery.p99), {
      target: tenTarget ? { op: "<", value: 100 } : undefined,
      baseline: lat99,
      note: tenTarget ? "the target is set at 500 msgs/s offered" : undefined,
    }),
    figure(sc, `delivery latency max ${at}`, "ms", rate.map((r) => r.delivery.max)),
    figure(sc, `  of which the server's (event made -> in the queues) p50 ${at}`, "ms", rate.map((r) => r.serverLag.p50), {
      note: "events_delivery_lag_seconds, within its buckets",
    }),
    figure(sc, `  of which the server's p99 ${at}`, "ms", rate.map((r) => r.serverLag.p99)),
    figure(sc, `lost + duplicated events ${at}`, "events", rate.map((r) => r.lost + r.duplicated), { target: { op: "=", value: 0 } }),
    figure(sc, `events per answered poll ${at}`, "events", rate.map((r) => r.eventsPerPoll)),
    figure(sc, "send errors (both phases)", "requests", tp.map((r, i) => r.sends.errors + rate[i].sends.errors + (rate[i].sends.skipped ?? 0)), {
      note: pollErrors ? `${pollErrors} poll errors` : undefined,
    }),
    ...(["gateway", "messaging", "events", "accounts", "postgres"] as const).map((s) =>
      figure(sc, `${s} CPU per message (closed loop)`, "ms", tp.map((r) => cpuPerMessage(r, s)), {
        baseline: paired.cpu(cals),
      }),
    ),
    figure(sc, "all services' CPU per message (closed loop)", "ms", tp.map((r) => Object.keys(r.cpu.services).reduce((a, s) => a + cpuPerMessage(r, s), 0)), {
      note: "2 cores / this = the sends per second the services' CPU alone allows",
    }),
    ...(["redis", "rabbitmq"] as const).map((b) =>
      figure(sc, `${b} CPU per message (closed loop)`, "ms", tp.map((r) => ((r.cpu.brokers[b] ?? NaN) * r.cpu.wallSeconds * 1000) / Math.max(1, r.sends.ok))),
    ),
    figure(sc, "whole machine's CPU per message (closed loop)", "ms", tp.map((r) => (r.cpu.machineBusy * os.cpus().length * r.cpu.wallSeconds * 1000) / Math.max(1, r.sends.ok)), {
      note: `everything, load generator and kernel included: ${os.cpus().length} cores / this = the sends per second this machine allows`,
    }),
    figure(sc, "whole machine's context switches per message (closed loop)", "switches", tp.map((r) => r.cpu.contextSwitches / Math.max(1, r.sends.ok)), {
      note: "processes put to sleep and woken: hops between processes, steady whatever the machine's speed",
    }),
    figure(sc, "load generator CPU (closed loop)", "cores", tp.map((r) => r.cpu.loadGenCores)),
    figure(sc, "machine CPU busy (closed loop)", "share", tp.map((r) => r.cpu.machineBusy)),
  ];
}
