import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median, round } from "./stats";

export const RESULTS_DIR = fileURLToPath(new URL("../../results/", import.meta.url));

/** A target from the issue: met when `value` compares as stated. */
export interface Target {
  op: "<" | ">=" | "=";
  value: number;
}

export interface Baseline {
  name: string;
  value: number;
  unit: string;
}

/** A baseline measured next to each run: the ratio is the median of the per-run ratios. */
export interface PairedBaseline {
  name: string;
  unit: string;
  runs: number[];
}

/** One printed row: the median over runs, its runs, the target, and the ratio to a baseline. */
export interface Figure {
  scenario: string;
  name: string;
  unit: string;
  runs: number[];
  value: number;
  target?: Target;
  met?: boolean;
  baseline?: Baseline;
  /** value / baseline.value (paired baselines: the median of the per-run ratios) */
  ratio?: number;
  baselineRuns?: number[];
  note?: string;
}

export function figure(
  scenario: string,
  name: string,
  unit: string,
  runs: number[],
  opts: { target?: Target; baseline?: Baseline | PairedBaseline; note?: string } = {},
): Figure {
  const value = median(runs);
  const f: Figure = { scenario, name, unit, runs: runs.map(round), value: round(value) };
  if (opts.baseline && "runs" in opts.baseline) {
    const b = opts.baseline;
    const ratios = runs.map((v, i) => v / b.runs[i]).filter((r) => Number.isFinite(r));
    f.baseline = { name: b.name, unit: b.unit, value: round(median(b.runs)) };
    if (ratios.length) f.ratio = round(median(ratios));
    f.baselineRuns = b.runs.map(round);
    opts = { ...opts, baseline: undefined };
  }
  if (opts.target) {
    f.target = opts.target;
    const t = opts.target;
    f.met = t.op === "<" ? value < t.value : t.op === ">=" ? value >= t.value : value === t.value;
  }
  const scalar = opts.baseline as Baseline | undefined;
  if (scalar && Number.isFinite(scalar.value) && scalar.value !== 0) {
    f.baseline = { ...scalar, value: round(scalar.value) };
    f.ratio = round(value / scalar.value);
  }
  if (opts.note) f.note = opts.note;
  return f;
}

const fmt = (v: number | undefined) => (v === undefined ? "" : Number.isFinite(v) ? String(round(v)) : String(v));

/** The table the issue asks for: one row per figure. */
export function renderTable(figures: Figure[]): string {
  const header = ["scenario", "figure", "median", "unit", "runs", "target", "baseline (same run)", "ratio"];
  const rows = figures.map((f) => [
    f.scenario,
    f.name,
    fmt(f.value),
    f.unit,
    f.runs.map(fmt).join(" / "),
    f.target ? `${f.target.op} ${f.target.value} ${f.met ? "ok" : "MISSED"}` : "",
    f.baseline ? `${f.baseline.name}: ${fmt(f.baseline.value)} ${f.baseline.unit}` : "",
    f.ratio === undefined ? "" : `${fmt(f.ratio)}x`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => "| " + cells.map((c, i) => c.padEnd(widths[i])).join(" | ") + " |";
  return [line(header), "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|", ...rows.map(line)].join("\n");
}

export function environment() {
  return {
    node: process.version,
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model,
    total_memory_mb: Math.round(os.totalmem() / 2 ** 20),
    load_average_at_start: os.loadavg().map(round),
  };
}

/** Writes `bench/results/<date>-<scenario>.json` and returns its path. */
export function writeResult(scenario: string, data: Record<string, unknown>, dir = RESULTS_DIR): string {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:]/g, "-").replace(/\..+$/, "");
  const file = path.join(dir, `${stamp}-${scenario}.json`);
  writeFileSync(file, JSON.stringify({ scenario, written_at: new Date().toISOString(), environment: environment(), ...data }, null, 2) + "\n");
  return file;
}
