/** Nearest-rank percentile of unsorted samples (NaN when there are none). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  return finite.length === 0 ? NaN : percentile(finite, 50);
}

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function summarize(samples: readonly number[]): LatencySummary {
  let max = -Infinity;
  for (const s of samples) if (s > max) max = s;
  return { count: samples.length, p50: percentile(samples, 50), p99: percentile(samples, 99), max: samples.length ? max : NaN };
}

/** Rounds for display and JSON: 3 significant digits below 100, integers above. */
export function round(v: number): number {
  if (!Number.isFinite(v)) return v;
  if (Math.abs(v) >= 100) return Math.round(v);
  return Number(v.toPrecision(3));
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
