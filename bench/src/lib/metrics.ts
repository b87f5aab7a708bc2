import { request } from "undici";
import { parseMetrics, sampleSum } from "@chat/testkit";

/** Reads a few gauges from a service's Prometheus `/metrics` (prom-client default metrics). */
export async function serviceMemory(baseUrl: string): Promise<{ rss: number; heapUsed: number }> {
  const res = await request(`${baseUrl}/metrics`);
  const text = await res.body.text();
  const gauge = (name: string) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, "m").exec(text);
    return m ? Number(m[1]) : NaN;
  };
  return { rss: gauge("process_resident_memory_bytes"), heapUsed: gauge("nodejs_heap_size_used_bytes") };
}

/**
 * Sums from one read of a service's `/metrics`: for each `[name, labels]`, the sum over every series
 * of that name whose labels include `labels` (NaN when the service does not show it).
 */
export async function metricSums(baseUrl: string, wanted: Array<[string, Record<string, string>]>): Promise<number[]> {
  const res = await request(`${baseUrl}/metrics`);
  const samples = parseMetrics(await res.body.text());
  return wanted.map(([name, labels]) => sampleSum(samples, name, labels));
}

/** A histogram's cumulative buckets from a service's `/metrics`, summed over its series, by upper bound. */
export async function histogramBuckets(baseUrl: string, name: string): Promise<Array<{ le: number; count: number }>> {
  const res = await request(`${baseUrl}/metrics`);
  const samples = parseMetrics(await res.body.text()).filter((s) => s.name === `${name}_bucket`);
  const byLe = new Map<number, number>();
  for (const s of samples) {
    const le = s.labels.le === "+Inf" ? Infinity : Number(s.labels.le);
    byLe.set(le, (byLe.get(le) ?? 0) + s.value);
  }
  return [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, count]) => ({ le, count }));
}

/**
 * The q-quantile of what a histogram counted between two readings, interpolated linearly inside
 * its bucket as Prometheus's histogram_quantile does (NaN when nothing was counted; the highest
 * finite bound when it falls in +Inf).
 */
export function quantileBetween(before: Array<{ le: number; count: number }>, after: Array<{ le: number; count: number }>, q: number): number {
  const was = new Map(before.map((b) => [b.le, b.count]));
  const buckets = after.map((b) => ({ le: b.le, count: b.count - (was.get(b.le) ?? 0) }));
  const total = buckets.at(-1)?.count ?? 0;
  if (total <= 0) return NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const b of buckets) {
    if (b.count >= rank) {
      if (b.le === Infinity) return lower;
      return lower + ((b.le - lower) * (rank - below)) / Math.max(1e-12, b.count - below);
    }
    lower = b.le;
    below = b.count;
  }
  return lower;
}
