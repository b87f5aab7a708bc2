import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { pipelineRegistry } from "./pipeline-metrics";

/**
 * Process metrics (CPU, memory, event-loop lag, GC) are collected once per process: every
 * collector installs timers and observers, and tests build many apps in one process.
 *
 * The event-loop delay histogram samples every EVENT_LOOP_SAMPLE_MS. prom-client's default, 10 ms,
 * is a timer that wakes every process 100 times a second, busy or idle: a tenth of the context
 * switches of the whole stack under the send benchmark, and the only thing an idle pod does.
 * At 100 ms a scrape every 15 s still sees 150 samples; a stall shorter than the interval is
 * caught in proportion to its length rather than always.
 */
const EVENT_LOOP_SAMPLE_MS = 100;
let processRegistry: Registry | null = null;
function processMetrics(service: string): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    processRegistry.setDefaultLabels({ service });
    pipelineRegistry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }
  return processRegistry;
}

/** A service's own figure, read when Prometheus scrapes (held polls, queues, ...). */
export interface GaugeSpec {
  help: string;
  read: () => number | Promise<number>;
}

/**
 * Request counts and latency histograms by method, route and status, for one app, and the
 * service's own gauges (a gauge whose read fails shows NaN in that scrape: unknown, not zero).
 */
export function createMetrics(service: string, gauges: Record<string, GaugeSpec> = {}) {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  const requests = new Counter({
    name: "http_requests_total",
    help: "HTTP requests by route and status",
    labelNames: ["method", "route", "status"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency by route and status",
    labelNames: ["method", "route", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60, 120],
    registers: [registry],
  });
  for (const [name, spec] of Object.entries(gauges)) {
    new Gauge({
      name,
      help: spec.help,
      registers: [registry],
      async collect() {
        try {
          this.set(await spec.read());
        } catch {
          this.set(Number.NaN);
        }
      },
    });
  }
  const process = processMetrics(service);
  type Series = { count: { inc(): void }; time: { observe(v: number): void } };
  // method -> route -> status: the label strings are a handful of constants, so these lookups
  // cost less than building and hashing a key per request.
  const children = new Map<string, Map<string, Map<number, Series>>>();
  return {
    registry,
    contentType: registry.contentType,
    /** The Prometheus text exposition: this app's request metrics, then the process's (event pipeline, Node.js). */
    async text(): Promise<string> {
      const [own, pipeline, node] = await Promise.all([registry.metrics(), pipelineRegistry.metrics(), process.metrics()]);
      return [own, pipeline, node].filter((part) => part !== "").join("\n");
    },
    observe(method: string, route: string, status: number, seconds: number) {
      // prom-client checks and hashes a label object on every call; a series' children are
      // bound to their labels once (routes and statuses are few).
      let byRoute = children.get(method);
      if (!byRoute) children.set(method, (byRoute = new Map()));
      let byStatus = byRoute.get(route);
      if (!byStatus) byRoute.set(route, (byStatus = new Map()));
      let series = byStatus.get(status);
      if (!series) {
        const labels = { method, route, status: String(status) };
        series = { count: requests.labels(labels), time: duration.labels(labels) };
        byStatus.set(status, series);
      }
      series.count.inc();
      series.time.observe(seconds);
    },
  };
}
