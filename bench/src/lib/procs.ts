import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * CPU and memory of the processes under test, read from /proc (Linux only): the stack does not
 * hand out pids, so a service is found by the socket listening on its port.
 */

const CLOCK_TICKS = 100; // USER_HZ on every Linux we run on

function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is col 1 ("0100007F:1F90"), state col 3 ("0A" = LISTEN), inode col 9.
      if (cols.length > 9 && cols[1].endsWith(`:${hex}`) && cols[3] === "0A") inodes.add(cols[9]);
    }
  }
  return inodes;
}

/** The pid of the process listening on `port`, or null when none of ours is found. */
export function pidForPort(port: number): number | null {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return null;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (m && inodes.has(m[1])) return Number(entry);
      } catch {
        /* fd closed meanwhile */
      }
    }
  }
  return null;
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

/** Resident set size in bytes. */
export function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** CPU seconds so far of each PostgreSQL backend serving database `dbName`, by pid. */
export function dbBackendsCpu(dbName: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmd.startsWith("postgres: ") && cmd.includes(` ${dbName} `)) out.set(Number(entry), cpuSeconds(Number(entry)));
    } catch {
      /* gone */
    }
  }
  return out;
}

/**
 * The shared servers' processes on this machine, by name: "redis" (redis-server) and "rabbitmq"
 * (the Erlang VM, beam.smp); null where none runs here (a remote stack's).
 */
export function brokerPids(): Record<string, number | null> {
  const found: Record<string, number | null> = { redis: null, rabbitmq: null };
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, "utf8").trim();
      if (comm === "redis-server" && found.redis === null) found.redis = Number(entry);
      else if (comm === "beam.smp" && found.rabbitmq === null) found.rabbitmq = Number(entry);
    } catch {
      /* gone */
    }
  }
  return found;
}

/**
 * Busy and total CPU ticks of the whole machine (all cores) and its context switches so far,
 * from /proc/stat.
 */
export function machineTicks(): { busy: number; total: number; switches: number } {
  const text = readFileSync("/proc/stat", "utf8");
  const v = text.slice(0, text.indexOf("\n")).trim().split(/\s+/).slice(1).map(Number);
  const idle = v[3] + (v[4] ?? 0);
  const total = v.reduce((a, b) => a + b, 0);
  const ctxt = /^ctxt (\d+)$/m.exec(text);
  return { busy: total - idle, total, switches: ctxt ? Number(ctxt[1]) : NaN };
}

export interface CpuReport {
  /** CPU time of this load generator as a share of one core (1.0 = one core busy). */
  loadGenCores: number;
  /** Per service, the same measure. */
  services: Record<string, number>;
  /** The same for Redis and RabbitMQ (not services: shared servers, see `brokerPids`). */
  brokers: Record<string, number>;
  /** All cores of the machine, busy share (1.0 = every core busy). */
  machineBusy: number;
  /**
   * Context switches of the whole machine over the window. Unlike CPU time it does not move
   * with the machine's speed: each is a process going to sleep or being woken, about one per
   * message that crosses from one process to another.
   */
  contextSwitches: number;
  wallSeconds: number;
}

/**
 * Measures CPU over a window: call `stop()` at its end. With `dbName`, the PostgreSQL backends
 * serving that database count as one more service, "postgres" (backends opened during the
 * window count from zero).
 */
export function cpuWindow(pids: Record<string, number | null>, dbName?: string, brokers: Record<string, number | null> = {}) {
  const start = performance.now();
  const brk0 = Object.fromEntries(Object.entries(brokers).map(([k, pid]) => [k, pid === null ? NaN : cpuSeconds(pid)]));
  const self0 = process.cpuUsage();
  const m0 = machineTicks();
  const svc0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, pid === null ? NaN : cpuSeconds(pid)]));
  const db0 = dbName ? dbBackendsCpu(dbName) : null;
  return {
    stop(): CpuReport {
      const wall = (performance.now() - start) / 1000;
      const self = process.cpuUsage(self0);
      const m1 = machineTicks();
      const services: Record<string, number> = {};
      for (const [k, pid] of Object.entries(pids)) services[k] = pid === null ? NaN : (cpuSeconds(pid) - svc0[k]) / wall;
      if (dbName && db0) {
        let used = 0;
        for (const [pid, cpu] of dbBackendsCpu(dbName)) used += cpu - (db0.get(pid) ?? 0);
        services.postgres = used / wall;
      }
      const brokerShares: Record<string, number> = {};
      for (const [k, pid] of Object.entries(brokers)) brokerShares[k] = pid === null ? NaN : (cpuSeconds(pid) - brk0[k]) / wall;
      return {
        loadGenCores: (self.user + self.system) / 1e6 / wall,
        services,
        brokers: brokerShares,
        machineBusy: (m1.busy - m0.busy) / Math.max(1, m1.total - m0.total),
        contextSwitches: m1.switches - m0.switches,
        wallSeconds: wall,
      };
    },
  };
}
