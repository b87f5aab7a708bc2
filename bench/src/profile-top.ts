/**
 * `pnpm --filter @chat/bench top <file.cpuprofile> [n]`: the functions with the most self time in a V8 CPU
 * profile, and the same grouped by package, as plain text (for the README and quick looks;
 * open the file in Chrome DevTools or speedscope.app for a flame graph).
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function packageOf(url: string): string {
  if (!url) return "(native/V8)";
  const nm = url.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split("/");
    return rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith("node:")) return "node core";
  const m = /\/(services\/[^/]+|packages\/[^/]+)\//.exec(url);
  return m ? m[1] : url;
}

export function topFunctions(profile: Profile, n = 25) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fns = new Map<string, number>();
  const pkgs = new Map<string, number>();
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    const where = f.url ? `${f.url.replace(/^file:\/\/.*?\/(services|packages|node_modules)\//, "$1/")}:${f.lineNumber + 1}` : "";
    const key = `${f.functionName || "(anonymous)"} ${where}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + us);
    const pkg = packageOf(f.url);
    pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + us);
  }
  // Inclusive time of our own code's functions (services/, packages/): where a request's CPU goes.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (!/\/(services|packages)\//.test(f.url) || f.url.includes("node_modules")) continue;
      const key = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*?\/(services|packages)\//, "$1/")}:${f.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const rank = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => ({ share: us / total, ms: us / 1000, name: k }));
  return { totalMs: total / 1000, wallMs: (profile.endTime - profile.startTime) / 1000, functions: rank(fns), packages: rank(pkgs), inclusive: rank(inclusive) };
}

/**
 * Who calls `name` (a function name as the profile has it, e.g. `writev`): its inclusive time
 * grouped by the chain of its `depth` nearest callers, largest first. A native function's
 * self time says little until one knows which of our paths reaches it.
 */
export function callersOf(profile: Profile, name: string, depth = 6, n = 8) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const self = new Map<number, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const us = profile.timeDeltas[i] ?? 0;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + us);
    total += us;
  }
  const inclusive = new Map<number, number>();
  const sum = (id: number): number => {
    let us = self.get(id) ?? 0;
    for (const c of byId.get(id)!.children ?? []) us += sum(c);
    inclusive.set(id, us);
    return us;
  };
  for (const node of profile.nodes) if (!parent.has(node.id)) sum(node.id);
  const chains = new Map<string, number>();
  for (const node of profile.nodes) {
    if (node.callFrame.functionName !== name) continue;
    // Recursion below a matching frame is counted once, at the outermost match.
    let outer = false;
    for (let cur = parent.get(node.id); cur !== undefined; cur = parent.get(cur)) if (byId.get(cur)!.callFrame.functionName === name) outer = true;
    if (outer) continue;
    const frames: string[] = [];
    for (let cur = parent.get(node.id); cur !== undefined && frames.length < depth; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      frames.push(`${f.functionName || "(anonymous)"}${f.url ? ` ${f.url.replace(/^.*\/(services|packages|node_modules)\//, "$1/")}:${f.lineNumber + 1}` : ""}`);
    }
    const key = frames.join(" <- ");
    chains.set(key, (chains.get(key) ?? 0) + inclusive.get(node.id)!);
  }
  return [...chains.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([chain, us]) => ({ share: total ? us / total : 0, ms: us / 1000, chain }));
}

/**
 * The share of each `binMs` window in which the process ran JavaScript or V8 (not idle), from
 * the profile's start: which phase of a measured window a process was busy in. (Starting the
 * profiler shows as a busy first window in every process: V8 logs its compiled code then.)
 */
export function busyTimeline(profile: Profile, binMs = 100): number[] {
  const idle = new Set(profile.nodes.filter((node) => node.callFrame.functionName === "(idle)").map((node) => node.id));
  const bins: Array<{ busy: number; all: number }> = [];
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const us = profile.timeDeltas[i] ?? 0;
    // A sample stands for the interval before it.
    const bin = Math.floor(t / 1000 / binMs);
    t += us;
    while (bins.length <= bin) bins.push({ busy: 0, all: 0 });
    bins[bin].all += us;
    if (!idle.has(profile.samples[i])) bins[bin].busy += us;
  }
  return bins.map((b) => (b.all ? b.busy / b.all : 0));
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write(
      "usage: pnpm --filter @chat/bench top <file.cpuprofile> [n]\n" +
        "       pnpm --filter @chat/bench top <file.cpuprofile> --callers <function> [depth]\n" +
        "       pnpm --filter @chat/bench top <file.cpuprofile> --timeline [bin ms]\n",
    );
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  if (process.argv[3] === "--callers") {
    const name = process.argv[4] ?? "";
    for (const c of callersOf(profile, name, Number(process.argv[5] ?? 6))) process.stdout.write(`  ${pct(c.share)}  ${c.chain}\n`);
    process.exit(0);
  }
  if (process.argv[3] === "--timeline") {
    const binMs = Number(process.argv[4] ?? 100);
    process.stdout.write(`busy share per ${binMs} ms from the profile's start:\n`);
    busyTimeline(profile, binMs).forEach((share, i) => process.stdout.write(`  ${String(i * binMs).padStart(6)} ms ${pct(share)}\n`));
    process.exit(0);
  }
  const top = topFunctions(profile, Number(process.argv[3] ?? 25));
  process.stdout.write(`${file}: ${top.totalMs.toFixed(0)} ms sampled over ${top.wallMs.toFixed(0)} ms wall\n\nby package (self time):\n`);
  for (const p of top.packages) process.stdout.write(`  ${pct(p.share)}  ${p.name}\n`);
  process.stdout.write("\nby function (self time):\n");
  for (const f of top.functions) process.stdout.write(`  ${pct(f.share)}  ${f.name}\n`);
  process.stdout.write("\nour functions (inclusive time):\n");
  for (const f of top.inclusive) process.stdout.write(`  ${pct(f.share)}  ${f.name}\n`);
}
