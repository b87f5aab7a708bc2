import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export function createMetrics(service: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
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
  return {
    registry,
    observe(method: string, route: string, status: number, seconds: number) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
  };
}
