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
