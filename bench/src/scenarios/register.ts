import { brotliDecompressSync, gunzipSync } from "node:zlib";
import type { Caller } from "../lib/http";
import { expectOk } from "../lib/http";
import type { Setup } from "../lib/org";
import type { CpuReport } from "../lib/procs";
import { figure, type Figure } from "../lib/report";
import { mapLimit, summarize, type LatencySummary } from "../lib/stats";
import { calibrate, paired, type Calibration, type Calibrator } from "../lib/calibrate";

/**
 * Scenario 3: POST /register through the gateway, all event types (no `fetch_event_types`,
 * no `event_types`), for users of an organization of U users and N channels. Each user is in a
 * tenth of the channels; the measured users are in all of them and have unread messages.
 */

export interface RegisterOptions {
  users: number;
  channels: number;
  /** Channel messages sent during setup (they make `unread_msgs` and `max_message_id` real). */
  messages: number;
  requests: number;
  runs: number;
}

/** Users whose registers are timed (rotated, so no single user's cache decides the figure). */
const MEASURED = 5;
const GROUPS = 10;

export async function runRegister(setup: Setup, opts: RegisterOptions, calib: Calibrator | null, log: (s: string) => void): Promise<{ figures: Figure[]; raw: unknown }> {
  log(`  register: creating ${opts.users} users`);
  const org = await setup.sharedOrg(opts.users);
  const names = Array.from({ length: opts.channels }, (_, i) => `bench-reg-${i}`);
  log(`  register: creating ${opts.channels} channels`);
  for (let g = 0; g < GROUPS; g++) {
    const members = org.users.filter((_, i) => i % GROUPS === g).map((u) => u.userId);
    await setup.createChannels(org, names.filter((_, i) => i % GROUPS === g), members);
  }
  const measured = org.users.slice(0, MEASURED);
  for (const u of measured) {
    const c = setup.gateway(u);
    for (let j = 0; j < names.length; j += 20) {
      expectOk(await c.post("/users/me/subscriptions", { subscriptions: names.slice(j, j + 20).map((name) => ({ name })) }), "subscribe");
    }
  }
  log(`  register: sending ${opts.messages} messages`);
  // Senders are the other users: the measured users end up with unread messages everywhere.
  const others = org.users.slice(MEASURED);
  await mapLimit(Array.from({ length: opts.messages }, (_, i) => i), 4, async (i) => {
    const sender = others.length ? others[i % others.length] : org.owner;
    const r = await setup.gateway(sender).post("/messages", { type: "stream", to: names[i % names.length], topic: `topic ${i % 7}`, content: `seed message ${i}` });
    expectOk(r, "seed POST /messages");
  });

  const callers: Caller[] = measured.map((u) => setup.gateway(u));
  // Warm-up (JIT, connection pools, caches), not measured.
  for (let i = 0; i < 10; i++) await registerOnce(callers[i % callers.length]);

  await setup.target.profileStart();
  const runs: Array<{ latency: LatencySummary; samples: number[]; bytes: number; keys: number; cpu: CpuReport }> = [];
  const cals: Calibration[] = [];
  for (let run = 0; run < opts.runs; run++) {
    cals.push(await calibrate(calib));
    const lat: number[] = [];
    let bytes = 0;
    let keys = 0;
    const cpu = setup.cpuWindow();
    for (let i = 0; i < opts.requests; i++) {
      const r = await registerOnce(callers[i % callers.length]);
      lat.push(r.ms);
      bytes = r.bytes;
      keys = r.keys;
    }
    runs.push({ latency: summarize(lat), samples: lat.map((ms) => Math.round(ms * 10) / 10), bytes, keys, cpu: cpu.stop() });
    log(`  register run ${run + 1}: p50 ${runs[run].latency.p50.toFixed(1)} ms, p99 ${runs[run].latency.p99.toFixed(1)} ms (${keys} keys, ${bytes} bytes)`);
  }
  await setup.target.profileStop("register");
  // As browsers and the mobile apps ask for it: compressed by the gateway (COMPRESS_RESPONSES).
  const compressed: Partial<Record<"gzip" | "br", { bytes: number; p50: number }>> = {};
  for (const encoding of ["gzip", "br"] as const) {
    const lat: number[] = [];
    let bytes = 0;
    for (let i = 0; i < COMPRESSED_REQUESTS; i++) {
      const c = callers[i % callers.length];
      const r = await c.raw("POST", "/register", {}, { "accept-encoding": encoding });
      if (r.status !== 200) throw new Error(`POST /register with ${encoding}: ${r.status}`);
      const plain = r.headers["content-encoding"] === undefined;
      const text = (plain ? r.bytes : encoding === "gzip" ? gunzipSync(r.bytes) : brotliDecompressSync(r.bytes)).toString("utf8");
      await c.delete("/events", { queue_id: (JSON.parse(text) as { queue_id: string }).queue_id });
      if (plain) break;
      lat.push(r.ms);
      bytes = r.bytes.length;
    }
    if (lat.length) compressed[encoding] = { bytes, p50: summarize(lat).p50 };
    else log(`  register: the gateway does not compress (COMPRESS_RESPONSES=false?); no ${encoding} figures`);
  }
  const sc = `register U=${opts.users}`;
  const figures = [
    figure(sc, `POST /register p50, all event types, ${opts.channels} channels`, "ms", runs.map((r) => r.latency.p50), {
      baseline: paired.p50(cals),
    }),
    figure(sc, "POST /register p99", "ms", runs.map((r) => r.latency.p99), {
      target: { op: "<", value: 50 },
      baseline: paired.p99(cals),
    }),
    figure(sc, "register response size", "KB", runs.map((r) => r.bytes / 1024)),
    ...(["gzip", "br"] as const).flatMap((encoding) => {
      const c = compressed[encoding];
      const name = encoding === "br" ? "brotli" : encoding;
      return c
        ? [
            figure(sc, `register response size, ${name} (${COMPRESSED_REQUESTS} requests after the runs)`, "KB", [c.bytes / 1024]),
            figure(sc, `POST /register p50 with ${name}`, "ms", [c.p50]),
          ]
        : [];
    }),
    ...["accounts", "messaging", "events", "gateway", "postgres"].map((s) =>
      figure(sc, `${s} CPU per register`, "ms", runs.map((r) => ((r.cpu.services[s] ?? NaN) * r.cpu.wallSeconds * 1000) / opts.requests), {
        baseline: paired.cpu(cals),
      }),
    ),
    figure(sc, "load generator CPU", "cores", runs.map((r) => r.cpu.loadGenCores)),
  ];
  return { figures, raw: { options: opts, calibrations: cals, runs } };
}

/** Registers asking for each compressed encoding, after the measured runs. */
const COMPRESSED_REQUESTS = 20;

async function registerOnce(c: Caller): Promise<{ ms: number; bytes: number; keys: number }> {
  const r = await c.post("/register", {});
  const body = expectOk(r, "POST /register") as { queue_id: string };
  // Not timed: a client leaving drops its queue; thousands of stale queues would skew later runs.
  await c.delete("/events", { queue_id: body.queue_id });
  return { ms: r.ms, bytes: JSON.stringify(body).length, keys: Object.keys(body).length };
}
