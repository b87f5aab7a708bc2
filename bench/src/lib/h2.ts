import http2 from "node:http2";
import { encode, type Params, type Reply } from "./http";

/**
 * GET requests as HTTP/2 streams over a few connections, round robin: how the gateway sends held
 * polls to the events service (see services/gateway/src/h2-upstream.ts). The idle scenario holds
 * its polls this way.
 */
export class H2Client {
  private readonly sessions: http2.ClientHttp2Session[];
  private next = 0;

  constructor(origin: string, connections: number) {
    this.sessions = Array.from({ length: connections }, () => {
      const s = http2.connect(origin, { peerMaxConcurrentStreams: 1_000_000 });
      s.on("error", () => {});
      return s;
    });
  }

  get<T = any>(path: string, params: Params, headers: Record<string, string>): Promise<Reply<T>> {
    const session = this.sessions[this.next];
    this.next = (this.next + 1) % this.sessions.length;
    const start = performance.now();
    return new Promise((resolve, reject) => {
      const stream = session.request({ ...headers, ":method": "GET", ":path": `/api/v1${path}?${encode(params)}` }, { endStream: true });
      let status = 0;
      let text = "";
      stream.on("response", (h) => (status = Number(h[":status"])));
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => (text += chunk));
      stream.on("end", () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          /* keep the text: the caller reports it */
        }
        resolve({ status, body: body as T, ms: performance.now() - start });
      });
      stream.on("error", reject);
    });
  }

  close(): void {
    for (const s of this.sessions) s.close();
  }
}
