import pg from "pg";
import type { Pool } from "undici";
import { BaselineServer } from "./baseline-server";
import { Caller, createPool } from "./http";
import { closedLoop } from "./load";
import { cpuSeconds } from "./procs";
import { percentile } from "./stats";

/**
 * A short baseline taken right before each measured run. Our machines are shared and their load
 * swings within minutes, so a baseline from the start of the bench says little about a run ten
 * minutes later; each run's figure is divided by the baseline taken next to it, and the table
 * shows the median of those ratios.
 */
export interface Calibration {
  /** Bare fastify GET, one client at a time. */
  httpP50Ms: number;
  httpP99Ms: number;
  /** Bare fastify POST with a message-sized form, `concurrency` clients. */
  httpRps: number;
  /** CPU the bare fastify process spent per request (ms). */
  httpCpuMs: number;
  /** PostgreSQL single-row insert-and-commit rate with `concurrency` connections. */
  pgCommitsPerSecond: number;
}

export class Calibrator {
  private pool: Pool | null = null;
  private seqPool: Pool | null = null;

  private constructor(
    readonly server: BaselineServer,
    private readonly db: pg.Pool,
    private readonly concurrency: number,
    private readonly ms: number,
  ) {}

  static async start(databaseUrl: string, concurrency: number, ms = 1000): Promise<Calibrator> {
    const db = new pg.Pool({ connectionString: databaseUrl, max: concurrency });
    await db.query("CREATE SCHEMA IF NOT EXISTS bench_calibration");
    await db.query("CREATE TABLE IF NOT EXISTS bench_calibration.rows (id bigserial PRIMARY KEY, payload text NOT NULL)");
    return new Calibrator(await BaselineServer.start(), db, concurrency, ms);
  }

  async measure(): Promise<Calibration> {
    this.pool ??= createPool(this.server.url, { connections: this.concurrency });
    this.seqPool ??= createPool(this.server.url, { connections: 1 });
    const client = new Caller(this.pool, {}, "");
    const seq = new Caller(this.seqPool, {}, "");
    const form = { type: "stream", to: "bench", topic: "bench", content: "x".repeat(60) };
    const pid = this.server.pid;
    const cpu0 = pid === null ? NaN : cpuSeconds(pid);
    const rate = await closedLoop(this.concurrency, this.ms, async () => {
      const r = await client.post("/ok", form);
      return r.status === 200 ? null : `HTTP ${r.status}`;
    });
    const httpCpuMs = pid === null ? NaN : ((cpuSeconds(pid) - cpu0) * 1000) / Math.max(1, rate.ok);
    const lat: number[] = [];
    const end = performance.now() + this.ms / 2;
    while (performance.now() < end) lat.push((await seq.get("/ok")).ms);
    const commits = await closedLoop(this.concurrency, this.ms, async () => {
      await this.db.query("INSERT INTO bench_calibration.rows (payload) VALUES ($1)", [form.content]);
      return null;
    });
    return {
      httpP50Ms: percentile(lat, 50),
      httpP99Ms: percentile(lat, 99),
      httpRps: rate.ok / rate.seconds,
      httpCpuMs,
      pgCommitsPerSecond: commits.ok / commits.seconds,
    };
  }

  async stop(): Promise<void> {
    await Promise.all([this.pool?.close(), this.seqPool?.close()]);
    await this.db.query("DROP SCHEMA IF EXISTS bench_calibration CASCADE").catch(() => {});
    await this.db.end();
    await this.server.stop();
  }
}

/** Paired baselines for figures, from the calibrations taken next to each run. */
export const paired = {
  p50: (c: Calibration[]) => ({ name: "bare fastify GET p50", unit: "ms", runs: c.map((x) => x.httpP50Ms) }),
  p99: (c: Calibration[]) => ({ name: "bare fastify GET p99", unit: "ms", runs: c.map((x) => x.httpP99Ms) }),
  rps: (c: Calibration[], clients: number) => ({ name: `bare fastify POST, ${clients} clients`, unit: "req/s", runs: c.map((x) => x.httpRps) }),
  cpu: (c: Calibration[]) => ({ name: "bare fastify CPU per request", unit: "ms", runs: c.map((x) => x.httpCpuMs) }),
  pg: (c: Calibration[]) => ({ name: "PostgreSQL insert+commit", unit: "rows/s", runs: c.map((x) => x.pgCommitsPerSecond) }),
};

/** Measures a calibration when a calibrator is there (it is, unless baselines are off). */
export async function calibrate(c: Calibrator | null): Promise<Calibration> {
  return c ? c.measure() : { httpP50Ms: NaN, httpP99Ms: NaN, httpRps: NaN, httpCpuMs: NaN, pgCommitsPerSecond: NaN };
}
