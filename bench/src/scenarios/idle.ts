import { identityHeaders } from "@chat/platform";
import { BaselineServer } from "../lib/baseline-server";
import type { Calibrator } from "../lib/calibrate";
import { H2Client } from "../lib/h2";
import { Caller, createPool, expectOk } from "../lib/http";
import { serviceMemory } from "../lib/metrics";
import { identityOf, type BenchOrg, type Setup } from "../lib/org";
import { cpuSeconds, type CpuReport } from "../lib/procs";
import { figure, type Figure } from "../lib/report";
import { mapLimit, percentile, sleep } from "../lib/stats";

/**
 * Scenario 2: C idle long polls held by one events instance (straight to the events service,
 * as the gateway forwards them: HTTP/2 streams over the gateway's default of four connections,
 * or with `http1` a connection each), memory per held poll, then one channel message that
 * reaches every one of them: time until the last poll has it. The same is done against the
 * bare fastify process (held requests answered by one release) as the baseline.
 */

export interface IdleOptions {
  polls: number;
  /** Users owning the queues (queue i belongs to user i mod users). */
  users: number;
  runs: number;
  /** Wait before the heap's reference reading (default: longer than a poll's leftovers live). */
  coolDownMs?: number;
  /** Hold the polls over HTTP/1.1, a connection each (how the gateway sent them before HTTP/2). */
  http1?: boolean;
}

/** The gateway's default EVENTS_HTTP2_CONNECTIONS. */
const GATEWAY_H2_CONNECTIONS = 4;

interface IdleRun {
  rssPerPollBytes: number;
  heapPerPollBytes: number;
  memory: Record<"before" | "held" | "released", { rss: number; heapUsed: number }>;
  held: number;
  fanOutLastMs: number;
  fanOutP50Ms: number;
  fanOutFirstMs: number;
  delivered: number;
  missing: number;
  pollErrors: number;
  /** The first few failed polls: status and body, or the client's error. */
  errorSamples: string[];
  /** The first few polls answered before the message was sent (so not held at the send). */
  earlySamples: string[];
  baseline: { rssPerHeldBytes: number; heapPerHeldBytes: number; releaseLastMs: number; released: number };
  cpu: CpuReport;
}

/** Longer than anything a finished poll keeps alive in the events service (see the reference reading). */
const COOL_DOWN_MS = 12_000;

/** Opens the connections in waves: a burst of 10,000 SYNs would overflow the listen backlog. */
const WAVE = 500;

export async function runIdle(setup: Setup, opts: IdleOptions, calib: Calibrator | null, log: (s: string) => void): Promise<{ figures: Figure[]; raw: unknown }> {
  const C = opts.polls;
  const U = Math.min(opts.users, C);
  log(`  idle C=${C}: creating ${U} users and the channel`);
  const shared = await setup.sharedOrg(U);
  const org = { ...shared, users: shared.users.slice(0, U) };
  const channel = `bench-idle-${C}`;
  const streamId = (await setup.createChannels(org, [channel], org.users.map((u) => u.userId))).get(channel)!;

  log(`  idle C=${C}: registering ${C} queues`);
  const regPool = createPool(setup.target.urls.events, { connections: 16 });
  const queues = await mapLimit(Array.from({ length: C }, (_, i) => i), 16, async (i) => {
    const user = org.users[i % U];
    const r = expectOk(await setup.direct(org, user, regPool).get("/events", { dont_block: true, event_types: ["message"], apply_markdown: false }), "GET /events (register)");
    return { user, queueId: (r as { queue_id: string }).queue_id, lastEventId: -1 };
  });
  await regPool.close();

  // The calibrator's bare fastify process when there is one (it holds nothing between runs).
  const server = calib?.server ?? (await BaselineServer.start());
  const runs: IdleRun[] = [];
  try {
    // One unmeasured round first: the events process sizes its heap and fills its caches for C
    // polls, so the measured rounds' RSS deltas show the polls rather than that growth.
    log(`  idle C=${C}: warm-up round`);
    await idleRun(setup, org, streamId, queues, server, opts, false);
    for (let run = 0; run < opts.runs; run++) {
      const r = await idleRun(setup, org, streamId, queues, server, opts, true);
      runs.push(r);
      log(
        `  idle C=${C} run ${run + 1}: ${r.held} held, ${(r.rssPerPollBytes / 1024).toFixed(2)} KB RSS/poll, last delivery ${r.fanOutLastMs.toFixed(0)} ms, missing ${r.missing}${r.pollErrors ? `, ${r.pollErrors} failed polls (${r.errorSamples.join("; ")})` : ""}${r.earlySamples.length ? `, answered before the send: ${r.earlySamples.join("; ")}` : ""}; baseline release ${r.baseline.releaseLastMs.toFixed(0)} ms`,
      );
    }
  } finally {
    if (!calib) await server.stop();
  }
  const sc = `idle C=${C}${opts.http1 ? " (HTTP/1.1)" : ""}`;
  // Paired: the bare fastify process held and released C requests in the same round.
  const bRss = { name: "bare fastify held request", unit: "KB", runs: runs.map((r) => r.baseline.rssPerHeldBytes / 1024) };
  const bHeap = { name: "bare fastify held request", unit: "KB", runs: runs.map((r) => r.baseline.heapPerHeldBytes / 1024) };
  const bRel = { name: `bare fastify releasing ${C}`, unit: "ms", runs: runs.map((r) => r.baseline.releaseLastMs) };
  const figures = [
    figure(sc, "polls held by one events instance", "polls", runs.map((r) => r.held), { target: { op: ">=", value: C } }),
    figure(sc, "RSS per held poll", "KB", runs.map((r) => r.rssPerPollBytes / 1024), { target: { op: "<", value: 4 }, baseline: bRss }),
    figure(sc, "heap per held poll", "KB", runs.map((r) => r.heapPerPollBytes / 1024), { baseline: bHeap }),
    figure(sc, `one event to all ${C} polls: last received`, "ms", runs.map((r) => r.fanOutLastMs), {
      target: C >= 10_000 ? { op: "<", value: 1000 } : undefined,
      baseline: bRel,
    }),
    figure(sc, `one event to all ${C} polls: median received`, "ms", runs.map((r) => r.fanOutP50Ms)),
    figure(sc, `one event to all ${C} polls: first received`, "ms", runs.map((r) => r.fanOutFirstMs)),
    figure(sc, "polls that missed the event", "polls", runs.map((r) => r.missing + r.pollErrors), { target: { op: "=", value: 0 } }),
    figure(sc, "events CPU (fan-out window)", "ms", runs.map((r) => (r.cpu.services.events ?? NaN) * r.cpu.wallSeconds * 1000)),
    figure(sc, "load generator CPU (fan-out window)", "cores", runs.map((r) => r.cpu.loadGenCores)),
  ];
  return { figures, raw: { polls: C, users: U, transport: opts.http1 ? "http/1.1" : "h2", runs } };
}

async function idleRun(
  setup: Setup,
  org: BenchOrg,
  streamId: number,
  queues: Array<{ user: BenchOrg["users"][number]; queueId: string; lastEventId: number }>,
  server: BaselineServer,
  opts: IdleOptions,
  /** Profile the fan-out (with `--profile`): from the send until the last poll has the event. */
  profile: boolean,
): Promise<IdleRun> {
  const C = queues.length;
  const eventsUrl = setup.target.urls.events;
  const pool = opts.http1 ? createPool(eventsUrl, { connections: C, timeoutMs: 600_000 }) : null;
  const h2 = opts.http1 ? null : new H2Client(eventsUrl, GATEWAY_H2_CONNECTIONS);
  const headersOf = new Map(org.users.map((u) => [u, identityHeaders(identityOf(org, u), setup.target.vars.INTERNAL_TOKEN)]));
  const before = await settledMemory(setup, eventsUrl);

  const arrivals: number[] = [];
  let pollErrors = 0;
  const errorSamples: string[] = [];
  const failed = (what: string) => {
    pollErrors++;
    if (errorSamples.length < 5) errorSamples.push(what);
  };
  let delivered = 0;
  let sentAt = Infinity;
  let returnedEarly = 0;
  const earlySamples: string[] = [];
  const polls: Promise<void>[] = [];
  for (let i = 0; i < C; i++) {
    const q = queues[i];
    const params = { queue_id: q.queueId, last_event_id: q.lastEventId };
    polls.push(
      (pool ? setup.direct(org, q.user, pool).get("/events", params) : h2!.get("/events", params, headersOf.get(q.user)!))
        .then((res) => {
          const at = performance.now();
          // Back before the message was sent (a heartbeat): this poll was not held at the send.
          if (at < sentAt) {
            returnedEarly++;
            if (earlySamples.length < 3) earlySamples.push(`HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
          }
          if (res.status !== 200) {
            failed(`HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
            return;
          }
          const events = res.body.events as Array<{ id: number; type: string }>;
          for (const e of events) if (e.id > q.lastEventId) q.lastEventId = e.id;
          if (events.some((e) => e.type === "message")) {
            delivered++;
            arrivals.push(at - sentAt);
          }
        })
        .catch((err: Error) => failed(`${err.name}: ${err.message}`)),
    );
    if ((i + 1) % WAVE === 0) await sleep(50);
  }
  await waitSettled(setup.target.pids().events, C);
  const after = await settledMemory(setup, eventsUrl);

  // One message to the channel: every queue's owner is subscribed.
  // The CPU window first: finding the processes reads every descriptor under /proc (a few
  // hundred milliseconds beside 10,000 held polls), which a profile should not show.
  const cpu = setup.cpuWindow();
  if (profile) await setup.target.profileStart();
  sentAt = performance.now();
  const held = C - returnedEarly;
  expectOk(await setup.gateway(org.owner).post("/messages", { type: "stream", to: streamId, topic: "idle", content: "wake up" }), "POST /messages");
  await Promise.race([Promise.all(polls), sleep(30_000)]);
  const cpuReport = cpu.stop();
  if (profile) await setup.target.profileStop("idle");
  await pool?.destroy();
  h2?.close();
  // The heap's reference reading: the same process once the polls are answered and anything a
  // poll leaves behind for a while (the wake-channel subscription lingers 10 s) is gone. (RSS
  // is compared with the reading before the hold: freed pages are not always returned.)
  await sleep(opts.coolDownMs ?? COOL_DOWN_MS);
  const released = await settledMemory(setup, eventsUrl);

  const baseline = await baselineHold(server, C);
  return {
    rssPerPollBytes: (after.rss - before.rss) / C,
    heapPerPollBytes: (after.heapUsed - released.heapUsed) / C,
    memory: { before, held: after, released },
    held,
    fanOutLastMs: arrivals.length ? Math.max(...arrivals) : NaN,
    fanOutP50Ms: percentile(arrivals, 50),
    fanOutFirstMs: arrivals.length ? Math.min(...arrivals) : NaN,
    delivered,
    missing: C - delivered - pollErrors,
    pollErrors,
    errorSamples,
    earlySamples,
    baseline,
    cpu: cpuReport,
  };
}

/**
 * Memory of the events service after a forced full GC (stacks this run started), or after a
 * pause for a stack given by URL (then the per-poll figures are noisier).
 */
async function settledMemory(setup: Setup, url: string) {
  const gc = setup.target.gc("events");
  if (gc) await gc;
  else await sleep(1500);
  await sleep(300);
  return serviceMemory(url);
}

/**
 * Waits until the events service has taken in every poll: its CPU falls quiet once the last
 * request is parsed and parked (a process still reading polls is busy). Without a pid (a stack
 * given by URL) it waits a time that grows with the number of polls.
 */
async function waitSettled(pid: number | null, polls: number): Promise<void> {
  if (pid === null) return sleep(3000 + polls / 2);
  const end = performance.now() + 60_000;
  let quiet = 0;
  while (performance.now() < end && quiet < 3) {
    const c0 = cpuSeconds(pid);
    await sleep(300);
    quiet = (cpuSeconds(pid) - c0) / 0.3 < 0.05 ? quiet + 1 : 0;
  }
}

async function baselineHold(server: BaselineServer, C: number) {
  const pool = createPool(server.url, { connections: C, timeoutMs: 600_000 });
  const client = new Caller(pool, {}, "");
  const control = createPool(server.url, { connections: 1 });
  const ctl = new Caller(control, {}, "");
  try {
    await ctl.post("/gc");
    await sleep(300);
    const before = (await ctl.get("/mem")).body as { rss: number; heap_used: number };
    const arrivals: number[] = [];
    let releasedAt = Infinity;
    const holds: Promise<void>[] = [];
    for (let i = 0; i < C; i++) {
      holds.push(client.get("/hold").then(() => void arrivals.push(performance.now() - releasedAt), () => {}));
      if ((i + 1) % WAVE === 0) await sleep(50);
    }
    const end = performance.now() + 60_000;
    while (performance.now() < end && ((await ctl.get("/held")).body as { held: number }).held < C) await sleep(200);
    await ctl.post("/gc");
    await sleep(300);
    const after = (await ctl.get("/mem")).body as { rss: number; heap_used: number };
    releasedAt = performance.now();
    await ctl.post("/release");
    await Promise.race([Promise.all(holds), sleep(30_000)]);
    // Read like the events service: connections closed, then a full GC.
    await pool.destroy();
    await sleep(500);
    await ctl.post("/gc");
    await sleep(300);
    const released = (await ctl.get("/mem")).body as { rss: number; heap_used: number };
    return {
      rssPerHeldBytes: (after.rss - before.rss) / C,
      heapPerHeldBytes: (after.heap_used - released.heap_used) / C,
      releaseLastMs: arrivals.length ? Math.max(...arrivals) : NaN,
      released: arrivals.length,
    };
  } finally {
    await Promise.all([pool.destroy().catch(() => {}), control.close()]);
  }
}
