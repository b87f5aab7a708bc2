import amqp from "amqplib";
import { Redis } from "ioredis";
import pg from "pg";
import { BaselineServer } from "../lib/baseline-server";
import { Caller, createPool } from "../lib/http";
import { closedLoop } from "../lib/load";
import { figure, type Figure } from "../lib/report";
import { cpuSeconds } from "../lib/procs";
import { median, percentile } from "../lib/stats";
import type { Target } from "../lib/target";

/**
 * What this machine can do right now with no application code in the way, measured in the same
 * run as the scenarios so that noisy neighbours hit both alike: PostgreSQL commits, Redis
 * pipelined writes, RabbitMQ confirmed publishes, and a bare fastify endpoint through the
 * same HTTP client the scenarios use.
 */

export interface BaselineOptions {
  runs: number;
  seconds: number;
  /** Concurrency of the rate baselines: the send scenario's sender count. */
  concurrency: number;
}

export interface Baselines {
  pgCommitsPerSecond: number;
  redisWritesPerSecond: number;
  amqpConfirmsPerSecond: number;
  /** Bare fastify POST with a message-sized form, `concurrency` clients. */
  httpRequestsPerSecond: number;
  /** Bare fastify GET, one client at a time. */
  httpP50Ms: number;
  /** CPU the bare fastify process spent per request in the rate phase (ms). */
  httpCpuMsPerRequest: number;
  httpP99Ms: number;
  figures: Figure[];
  raw: Record<string, unknown[]>;
}

const PAYLOAD = JSON.stringify({ type: "message", content: "x".repeat(200), flags: [] });

export async function pgCommitRate(databaseUrl: string, concurrency: number, seconds: number): Promise<number> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: concurrency });
  try {
    await pool.query("CREATE SCHEMA IF NOT EXISTS bench_baseline");
    await pool.query(
      "CREATE TABLE IF NOT EXISTS bench_baseline.rows (id bigserial PRIMARY KEY, realm_id bigint NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())",
    );
    const res = await closedLoop(concurrency, seconds * 1000, async () => {
      // One statement outside a transaction block: one commit (and WAL flush) per row.
      await pool.query("INSERT INTO bench_baseline.rows (realm_id, payload) VALUES ($1, $2)", [1, PAYLOAD]);
      return null;
    });
    return res.ok / res.seconds;
  } finally {
    await pool.query("DROP SCHEMA IF EXISTS bench_baseline CASCADE").catch(() => {});
    await pool.end();
  }
}

export async function redisPipelineRate(url: string, prefix: string, seconds: number, batch = 1000): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  const keys = Array.from({ length: 100 }, (_, i) => `${prefix}bench:baseline:${i}`);
  try {
    let writes = 0;
    const start = performance.now();
    const end = start + seconds * 1000;
    while (performance.now() < end) {
      const pipe = redis.pipeline();
      for (let i = 0; i < batch; i++) pipe.rpush(keys[i % keys.length], PAYLOAD);
      await pipe.exec();
      writes += batch;
    }
    return writes / ((performance.now() - start) / 1000);
  } finally {
    await redis.del(...keys).catch(() => {});
    redis.disconnect();
  }
}

export async function amqpConfirmRate(url: string, queuePrefix: string, seconds: number, window = 100): Promise<number> {
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createConfirmChannel();
    const queue = `${queuePrefix}bench.baseline.${process.pid}`;
    await ch.assertQueue(queue, { durable: true, arguments: { "x-expires": 60_000 } });
    const body = Buffer.from(PAYLOAD);
    let confirmed = 0;
    let failed = 0;
    let inFlight = 0;
    const start = performance.now();
    const end = start + seconds * 1000;
    await new Promise<void>((resolve) => {
      const pump = () => {
        while (inFlight < window && performance.now() < end) {
          inFlight++;
          ch.publish("", queue, body, { persistent: true, contentType: "application/json" }, (err) => {
            inFlight--;
            if (err) failed++;
            else confirmed++;
            if (performance.now() < end) pump();
            else if (inFlight === 0) resolve();
          });
        }
      };
      pump();
    });
    const rate = confirmed / ((performance.now() - start) / 1000);
    await ch.deleteQueue(queue).catch(() => {});
    await ch.close().catch(() => {});
    if (failed) throw new Error(`${failed} publishes were nacked`);
    return rate;
  } finally {
    await conn.close().catch(() => {});
  }
}

export async function httpBaseline(server: BaselineServer, concurrency: number, seconds: number) {
  const pool = createPool(server.url, { connections: concurrency });
  const client = new Caller(pool, {}, "");
  try {
    const form = { type: "stream", to: "bench", topic: "bench", content: "x".repeat(60) };
    const cpu0 = server.pid === null ? NaN : cpuSeconds(server.pid);
    const rate = await closedLoop(concurrency, seconds * 1000, async () => {
      const r = await client.post("/ok", form);
      return r.status === 200 ? null : `HTTP ${r.status}`;
    });
    const cpuMs = server.pid === null ? NaN : ((cpuSeconds(server.pid) - cpu0) * 1000) / Math.max(1, rate.ok);
    const lat: number[] = [];
    const end = performance.now() + Math.min(seconds, 2) * 1000;
    while (performance.now() < end) lat.push((await client.get("/ok")).ms);
    return { rps: rate.ok / rate.seconds, p50: percentile(lat, 50), p99: percentile(lat, 99), cpuMs };
  } finally {
    await pool.close();
  }
}

export async function runBaselines(target: Target, opts: BaselineOptions, log: (s: string) => void): Promise<Baselines> {
  const raw: Record<string, unknown[]> = { pg: [], redis: [], amqp: [], http: [] };
  const server = await BaselineServer.start();
  try {
    for (let run = 0; run < opts.runs; run++) {
      raw.pg.push(await pgCommitRate(target.vars.DATABASE_URL, opts.concurrency, opts.seconds));
      raw.redis.push(await redisPipelineRate(target.vars.REDIS_URL, target.vars.REDIS_PREFIX ?? "", opts.seconds));
      raw.amqp.push(await amqpConfirmRate(target.vars.AMQP_URL, target.vars.AMQP_QUEUE_PREFIX ?? "", opts.seconds));
      raw.http.push(await httpBaseline(server, opts.concurrency, opts.seconds));
      log(`  baselines run ${run + 1}/${opts.runs} done`);
    }
  } finally {
    await server.stop();
  }
  const http = raw.http as Array<{ rps: number; p50: number; p99: number; cpuMs: number }>;
  const b = {
    pgCommitsPerSecond: median(raw.pg as number[]),
    redisWritesPerSecond: median(raw.redis as number[]),
    amqpConfirmsPerSecond: median(raw.amqp as number[]),
    httpRequestsPerSecond: median(http.map((h) => h.rps)),
    httpP50Ms: median(http.map((h) => h.p50)),
    httpP99Ms: median(http.map((h) => h.p99)),
    httpCpuMsPerRequest: median(http.map((h) => h.cpuMs)),
  };
  const c = opts.concurrency;
  const figures = [
    figure("baseline", `PostgreSQL single-row insert+commit, ${c} connections`, "rows/s", raw.pg as number[]),
    figure("baseline", "Redis pipelined RPUSH (1,000 per pipeline)", "writes/s", raw.redis as number[]),
    figure("baseline", "RabbitMQ persistent publish with confirm (100 in flight)", "msgs/s", raw.amqp as number[]),
    figure("baseline", `bare fastify POST, ${c} clients`, "req/s", http.map((h) => h.rps)),
    figure("baseline", "bare fastify CPU per POST", "ms", http.map((h) => h.cpuMs)),
    figure("baseline", "bare fastify GET latency p50, 1 client", "ms", http.map((h) => h.p50)),
    figure("baseline", "bare fastify GET latency p99, 1 client", "ms", http.map((h) => h.p99)),
  ];
  return { ...b, figures, raw };
}
