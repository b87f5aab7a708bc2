import { request } from "undici";

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
