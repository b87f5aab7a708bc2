import { sleep } from "./stats";

export interface LoopResult {
  /** Operations that succeeded. */
  ok: number;
  errors: number;
  /** The first few error descriptions, for the report. */
  errorSamples: string[];
  /** Latency of each successful operation, ms. */
  latencies: number[];
  seconds: number;
}

/**
 * Closed loop: `concurrency` workers each run `op` back to back until `durationMs` has passed.
 * `op` returns an error description, or null on success.
 */
export async function closedLoop(
  concurrency: number,
  durationMs: number,
  op: (worker: number, seq: number) => Promise<string | null>,
): Promise<LoopResult> {
  const result: LoopResult = { ok: 0, errors: 0, errorSamples: [], latencies: [], seconds: 0 };
  const start = performance.now();
  const end = start + durationMs;
  let seq = 0;
  const worker = async (w: number) => {
    while (performance.now() < end) {
      const t = performance.now();
      const err = await op(w, seq++).catch((e: Error) => e.message);
      if (err === null) {
        result.ok++;
        result.latencies.push(performance.now() - t);
      } else {
        result.errors++;
        if (result.errorSamples.length < 5) result.errorSamples.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  result.seconds = (performance.now() - start) / 1000;
  return result;
}

/**
 * Open loop: starts `op` at a fixed rate regardless of how long earlier ones take (so a slow
 * server shows up as latency, not as a lower offered load), capped at `maxInFlight`.
 */
export async function openLoop(
  ratePerSecond: number,
  durationMs: number,
  maxInFlight: number,
  op: (seq: number) => Promise<string | null>,
): Promise<LoopResult & { skipped: number }> {
  const result = { ok: 0, errors: 0, errorSamples: [] as string[], latencies: [] as number[], seconds: 0, skipped: 0 };
  const start = performance.now();
  const total = Math.floor((ratePerSecond * durationMs) / 1000);
  const running = new Set<Promise<void>>();
  for (let seq = 0; seq < total; seq++) {
    const due = start + (seq * 1000) / ratePerSecond;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    if (running.size >= maxInFlight) {
      // The server fell this far behind: the send is counted as skipped, not silently delayed.
      result.skipped++;
      continue;
    }
    const t = performance.now();
    const p: Promise<void> = op(seq)
      .catch((e: Error) => e.message)
      .then((err) => {
        running.delete(p);
        if (err === null) {
          result.ok++;
          result.latencies.push(performance.now() - t);
        } else {
          result.errors++;
          if (result.errorSamples.length < 5) result.errorSamples.push(err);
        }
      });
    running.add(p);
  }
  await Promise.all(running);
  result.seconds = (performance.now() - start) / 1000;
  return result;
}
