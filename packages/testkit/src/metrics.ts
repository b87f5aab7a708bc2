/** One sample of Prometheus text: a metric name, its labels and its value. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text -> samples with their labels (comment lines skipped). */
export function parseMetrics(text: string): MetricSample[] {
  return text
    .split("\n")
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => {
      const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(l)!;
      const labels = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
      return { name: m[1], labels, value: Number(m[3]) };
    });
}

/** The value of the sample with exactly these labels, or undefined. */
export function sample(samples: MetricSample[], name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels);
  return samples.find((s) => s.name === name && Object.keys(s.labels).length === want.length && want.every(([k, v]) => s.labels[k] === v))?.value;
}

/** The sum over every sample of `name` whose labels include `labels` (NaN when there is none). */
export function sampleSum(samples: MetricSample[], name: string, labels: Record<string, string>): number {
  const matching = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.length ? matching.reduce((a, s) => a + s.value, 0) : NaN;
}
