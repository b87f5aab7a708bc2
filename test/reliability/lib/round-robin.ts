import http from "node:http";
import net from "node:net";
import { encodeParams } from "@chat/platform";
import type { ApiClient, ApiResponse, RequestOptions } from "@chat/testkit";

/**
 * What a Kubernetes Service does in front of a service's replicas, for tests on one machine: a
 * TCP proxy on 127.0.0.1 that hands each new connection to the next replica in turn. A replica
 * whose connect fails (its process is gone, or not listening yet) gets no more connections until
 * a probe connects to it again, as a Service drops an endpoint that fails its readiness probe
 * until it passes; the connection that found it dead is reset, as the client of a Service whose
 * endpoint died sees it.
 */
export interface RoundRobinProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Connections handed to each replica so far, by index. */
  readonly handedOut: number[];
  /** Replicas taken out of the rotation after a failed connect. */
  readonly down: ReadonlySet<number>;
  /** Which replica the connection from the client's local `port` went to (the latest such connection). */
  backendOf(clientPort: number): number | undefined;
  close(): Promise<void>;
}

/** `backends` is read at each connection: the replicas' ports may be known only after the proxy starts. */
export async function startRoundRobinProxy(backends: () => string[], opts: { probeMs?: number } = {}): Promise<RoundRobinProxy> {
  const probeMs = opts.probeMs ?? 250;
  const handedOut: number[] = [];
  const down = new Set<number>();
  const byClientPort = new Map<number, number>();
  const sockets = new Set<net.Socket>();
  let next = 0;
  let closed = false;
  const probes = new Set<NodeJS.Timeout>();

  /** Takes replica `i` out of the rotation and probes it until it accepts a connection again. */
  const markDown = (i: number, url: URL) => {
    if (down.has(i)) return;
    down.add(i);
    const probe = () => {
      if (closed) return;
      const s = net.connect({ host: url.hostname, port: Number(url.port) });
      s.once("connect", () => {
        s.destroy();
        down.delete(i);
      });
      s.once("error", () => {
        s.destroy();
        const t = setTimeout(() => {
          probes.delete(t);
          probe();
        }, probeMs);
        probes.add(t);
      });
    };
    const t = setTimeout(() => {
      probes.delete(t);
      probe();
    }, probeMs);
    probes.add(t);
  };

  const pick = (count: number): number | null => {
    for (let tried = 0; tried < count; tried++) {
      const i = next++ % count;
      if (!down.has(i)) return i;
    }
    return null;
  };

  const server = net.createServer((client) => {
    const urls = backends();
    const i = pick(urls.length);
    if (i === null) {
      client.resetAndDestroy();
      return;
    }
    handedOut[i] = (handedOut[i] ?? 0) + 1;
    if (client.remotePort !== undefined) byClientPort.set(client.remotePort, i);
    const target = new URL(urls[i]);
    const upstream = net.connect({ host: target.hostname, port: Number(target.port) });
    let connected = false;
    sockets.add(client);
    sockets.add(upstream);
    upstream.once("connect", () => {
      connected = true;
    });
    const teardown = () => {
      sockets.delete(client);
      sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    upstream.on("error", (err: NodeJS.ErrnoException) => {
      if (!connected && (err.code === "ECONNREFUSED" || err.code === "ECONNRESET")) markDown(i, target);
      if (!client.destroyed) client.resetAndDestroy();
      teardown();
    });
    client.on("error", teardown);
    client.on("close", teardown);
    upstream.on("close", teardown);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    handedOut,
    down,
    backendOf: (clientPort) => byClientPort.get(clientPort),
    close() {
      closed = true;
      for (const t of probes) clearTimeout(t);
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Paths served outside `/api/v1` (as the testkit's client has them). */
const ROOT_PATHS = ["/api/", "/user_uploads/", "/health", "/ready", "/metrics"];

/**
 * A Zulip-style client like the testkit's `apiClient`, except that every request goes over a new
 * connection (`Connection: close`), so that a round-robin proxy spreads one client's requests over
 * the replicas behind it, and that it says which replica answered each (`onAnswer`, through the
 * proxy's record of the connection's client port).
 */
export function spreadClient(
  proxy: RoundRobinProxy,
  email: string,
  apiKey: string,
  onAnswer?: (method: string, path: string, replica: number | undefined) => void,
): ApiClient {
  const auth = "Basic " + Buffer.from(`${email}:${apiKey}`).toString("base64");
  const request = (method: string, path: string, params: Record<string, unknown> = {}, opts: RequestOptions = {}): Promise<ApiResponse> =>
    new Promise((resolve, reject) => {
      let url = proxy.url + (ROOT_PATHS.some((p) => path.startsWith(p)) ? "" : "/api/v1") + path;
      const form = encodeParams(params).toString();
      const headers: Record<string, string> = { authorization: auth, ...opts.headers };
      let body: string | undefined;
      if (method === "GET") {
        if (form) url += (url.includes("?") ? "&" : "?") + form;
      } else {
        body = form;
        headers["content-type"] ??= "application/x-www-form-urlencoded";
        headers["content-length"] = String(Buffer.byteLength(body));
      }
      let localPort: number | undefined;
      // agent false: a connection of its own, closed after the answer.
      const req = http.request(url, { method, headers, agent: false, signal: opts.signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          if (String(res.headers["content-type"] ?? "").includes("json")) {
            try {
              parsed = JSON.parse(text);
            } catch {
              /* keep the text */
            }
          }
          onAnswer?.(method, path, localPort === undefined ? undefined : proxy.backendOf(localPort));
          const flat = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]));
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: flat });
        });
      });
      req.on("socket", (s) => s.once("connect", () => (localPort = s.localPort)));
      req.on("error", reject);
      req.end(body);
    });
  return {
    request,
    get: (p, params, opts) => request("GET", p, params, opts),
    post: (p, params, opts) => request("POST", p, params, opts),
    patch: (p, params, opts) => request("PATCH", p, params, opts),
    put: (p, params, opts) => request("PUT", p, params, opts),
    delete: (p, params, opts) => request("DELETE", p, params, opts),
  };
}
