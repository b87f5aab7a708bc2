import net from "node:net";

/**
 * A TCP proxy that tests put between a service and PostgreSQL, Redis or RabbitMQ to simulate
 * outages: cut every connection, refuse new ones, add latency, or freeze traffic.
 */
export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  /** Open client connections right now. */
  readonly connections: number;
  /** `url` with its host and port replaced by the proxy's (`amqp://guest:guest@127.0.0.1:5672` -> proxy). */
  url(url: string): string;
  /** Destroys every open connection (both sides), like a broker restart or a network reset. */
  cut(): void;
  /** Cuts every connection and closes new ones at once until `unblock()`: the target looks down. */
  block(): void;
  unblock(): void;
  /** Delays every chunk in both directions by `ms` (0 turns it off). Order is kept. */
  setLatency(ms: number): void;
  /** Holds all traffic (connections stay open, bytes are queued) until `resume()`: a network stall. */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

interface Pipe {
  client: net.Socket;
  upstream: net.Socket;
}

type ProxyTarget = { host: string; port: number } | string;

/**
 * Starts a proxy on a free local port forwarding to `target` (`host:port` or a URL with a port).
 * A function target is resolved at each new connection: for a proxy started before the port of
 * what it fronts is known (a stack service's port is picked inside `startStack`).
 */
export async function startProxy(target: ProxyTarget | (() => ProxyTarget), opts: { host?: string } = {}): Promise<TcpProxy> {
  const resolve = (t: ProxyTarget) => (typeof t === "string" ? parseTarget(t) : t);
  const fixed = typeof target === "function" ? null : resolve(target);
  const pipes = new Set<Pipe>();
  let latency = 0;
  let paused = false;
  let blocked = false;
  // Chunks held while paused, flushed in order on resume.
  const held: Array<() => void> = [];

  const forward = (dst: net.Socket) => (chunk: Buffer) => {
    const write = () => {
      if (!dst.destroyed) dst.write(chunk);
    };
    const send = () => (paused ? held.push(write) : write());
    if (latency > 0) {
      // Chained timers with equal delays fire in insertion order, so byte order is preserved.
      setTimeout(send, latency);
    } else {
      send();
    }
  };

  const server = net.createServer((client) => {
    if (blocked) {
      client.destroy();
      return;
    }
    const to = fixed ?? resolve((target as () => ProxyTarget)());
    const upstream = net.connect({ host: to.host, port: to.port });
    const pipe: Pipe = { client, upstream };
    pipes.add(pipe);
    const teardown = () => {
      pipes.delete(pipe);
      client.destroy();
      upstream.destroy();
    };
    client.on("data", forward(upstream));
    upstream.on("data", forward(client));
    client.on("error", teardown);
    upstream.on("error", teardown);
    client.on("close", teardown);
    upstream.on("close", teardown);
  });

  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  const cut = () => {
    for (const p of [...pipes]) {
      // resetAndDestroy sends a RST, which is what a crashed peer looks like.
      p.client.resetAndDestroy();
      p.upstream.resetAndDestroy();
    }
    pipes.clear();
    held.length = 0;
  };

  return {
    host,
    port,
    get connections() {
      return pipes.size;
    },
    url(url: string) {
      const u = new URL(url);
      u.hostname = host;
      u.port = String(port);
      return u.toString().replace(/\/$/, url.endsWith("/") ? "/" : "");
    },
    cut,
    block() {
      blocked = true;
      cut();
    },
    unblock() {
      blocked = false;
    },
    setLatency(ms: number) {
      latency = Math.max(0, ms);
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const write of held.splice(0)) write();
    },
    close() {
      cut();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function parseTarget(target: string): { host: string; port: number } {
  if (target.includes("://")) {
    const u = new URL(target);
    const defaults: Record<string, number> = { "postgres:": 5432, "postgresql:": 5432, "redis:": 6379, "amqp:": 5672 };
    return { host: u.hostname, port: Number(u.port || defaults[u.protocol]) };
  }
  const i = target.lastIndexOf(":");
  return { host: target.slice(0, i), port: Number(target.slice(i + 1)) };
}
