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
 * A histogram's running sum and count from a service's `/metrics`, over every series whose labels
 * include `labels` (NaN when the service does not show it).
 */
export async function histogramTotals(baseUrl: string, name: string, labels: Record<string, string>): Promise<{ sum: number; count: number }> {
  const res = await request(`${baseUrl}/metrics`);
  const samples = parseMetrics(await res.body.text());
  return { sum: sampleSum(samples, `${name}_sum`, labels), count: sampleSum(samples, `${name}_count`, labels) };
}
