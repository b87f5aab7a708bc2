import http2, { type ClientHttp2Session, type ClientHttp2Stream } from "node:http2";
import type { Readable } from "node:stream";
import type { Logger } from "@chat/platform";

/** An upstream's answer: its status, headers and body (read whole when small, else the stream). */
export interface UpstreamAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer | Readable;
}

/**
 * Largest upstream answer the gateway reads whole before sending it on, over either protocol:
 * nearly every API call and long poll, for which one write costs less than piping a stream.
 */
export const BUFFERED_RESPONSE_BYTES = 64 * 1024;

/** After a connection could not be opened, requests go over HTTP/1.1 for this long. */
const RETRY_AFTER_FAILURE_MS = 5_000;

/** Receive windows: a large answer (a poll after a long absence) and a fan-out's burst. */
const STREAM_WINDOW_BYTES = 1 << 20;
const CONNECTION_WINDOW_BYTES = 16 << 20;

/** The peer's stream limit before its settings arrive (Node's default, 100, would queue polls). */
const PEER_MAX_STREAMS = 1_000_000;

interface Slot {
  session: ClientHttp2Session;
  openedAt: number;
}

/**
 * GET requests to one upstream as streams over a few HTTP/2 connections (cleartext, prior
 * knowledge): the gateway's held polls. Over HTTP/1.1 each held poll kept a connection of its own
 * open to the events service, so 10,000 waiting clients were 10,000 sockets, parsers and request
 * objects there (and 10,000 of the gateway's ephemeral ports toward one address); as streams they
 * share `connections` sockets.
 *
 * Connections are opened lazily and used in turn. Each is retired after `maxAgeMs` (told to go
 * away; its open streams finish), so a gateway spreads its polls over events instances added
 * since. `get` resolves with null whenever the request did not get an answer over HTTP/2 (no
 * connection, a refused or reset stream, or the upstream's 421, which means "not over HTTP/2"):
 * the caller repeats it over HTTP/1.1. A GET to the events service may be repeated: a queue's
 * events stay until a later poll acknowledges them.
 */
export class H2Upstream {
  private readonly slots: Array<Slot | null>;
  private next = 0;
  private failedUntil = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly opts: { connections: number; maxAgeMs: number; timeoutMs: number; connectTimeoutMs: number },
    private readonly log: Logger,
  ) {
    this.slots = Array.from({ length: opts.connections }, () => null);
  }

  /**
   * Sends GET `path`; null when the caller should repeat it over HTTP/1.1. `signal` cancels the
   * stream (the client went away, or shutdown), and `get` then rejects with the signal's reason.
   */
  async get(path: string, headers: Record<string, string | string[]>, signal: AbortSignal): Promise<UpstreamAnswer | null> {
    const session = this.session();
    if (!session) return null;
    let stream: ClientHttp2Stream;
    try {
      stream = session.request({ ...h2Headers(headers), ":method": "GET", ":path": path }, { endStream: true, signal });
    } catch {
      return null;
    }
    // Failures show as a close without an answer (below); the error itself tells nothing more.
    stream.on("error", ignore);
    let timedOut = false;
    stream.setTimeout(this.opts.timeoutMs, () => {
      timedOut = true;
      stream.close(http2.constants.NGHTTP2_CANCEL);
    });
    // Rejects when the caller cancelled or the upstream timed out (no point asking again).
    const gone = (): Error | null => (signal.aborted ? toError(signal.reason) : timedOut ? new Error("upstream timed out") : null);
    const response = await new Promise<http2.IncomingHttpHeaders | null>((resolve, reject) => {
      const onClose = () => {
        const err = gone();
        if (err) reject(err);
        else resolve(null);
      };
      stream.once("close", onClose);
      stream.once("response", (h) => {
        stream.removeListener("close", onClose);
        resolve(h);
      });
    });
    if (!response) return null;
    const status = Number(response[":status"]);
    if (status === 421) {
      stream.resume();
      return null;
    }
    const length = Number(response["content-length"] ?? NaN);
    if (!(length <= BUFFERED_RESPONSE_BYTES)) return { status, headers: response, body: stream };
    const chunks: Buffer[] = [];
    const complete = await new Promise<boolean>((resolve) => {
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.once("end", () => resolve(true));
      stream.once("close", () => resolve(stream.readableEnded));
    });
    if (!complete) {
      const err = gone();
      if (err) throw err;
      return null;
    }
    return { status, headers: response, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) };
  }

  /** Connections open now (connecting or connected, not yet closed). */
  get openConnections(): number {
    return this.slots.filter((slot) => slot && !slot.session.closed && !slot.session.destroyed).length;
  }

  /** Tells every connection to go away once its streams are done. */
  close(): void {
    for (const slot of this.slots) slot?.session.close();
    this.slots.fill(null);
  }

  /** The next connection in turn, opened or replaced as needed; null while opening fails. */
  private session(): ClientHttp2Session | null {
    const now = Date.now();
    if (now < this.failedUntil) return null;
    const i = this.next;
    this.next = (i + 1) % this.slots.length;
    const slot = this.slots[i];
    if (slot && !slot.session.closed && !slot.session.destroyed && now - slot.openedAt < this.opts.maxAgeMs) return slot.session;
    // Retired or gone: its open streams finish on it; new ones go to a new connection.
    slot?.session.close();
    const session = http2.connect(this.baseUrl, {
      peerMaxConcurrentStreams: PEER_MAX_STREAMS,
      settings: { enablePush: false, initialWindowSize: STREAM_WINDOW_BYTES },
    });
    // HTTP/2's default connection window (64 KB in flight) would pace a fan-out's thousands of
    // answers by round trips between two nodes; this much may be on its way at once.
    session.once("connect", () => session.setLocalWindowSize(CONNECTION_WINDOW_BYTES));
    const connectTimer = setTimeout(() => session.destroy(new Error("connect timeout")), this.opts.connectTimeoutMs);
    connectTimer.unref();
    // A connection whose peer never sent its settings does not speak HTTP/2 (refused, or an
    // instance from before it did): HTTP/1.1 for a while, then try again.
    let spoken = false;
    session.once("remoteSettings", () => {
      spoken = true;
      clearTimeout(connectTimer);
    });
    session.on("error", (err: Error & { code?: string }) => {
      this.log.warn({ err: err.message, code: err.code, upstream: this.baseUrl }, spoken ? "HTTP/2 connection to upstream failed" : "no HTTP/2 to upstream; HTTP/1.1 for now");
    });
    session.once("close", () => {
      clearTimeout(connectTimer);
      if (!spoken) this.failedUntil = Date.now() + RETRY_AFTER_FAILURE_MS;
      if (this.slots[i]?.session === session) this.slots[i] = null;
    });
    // An idle connection does not keep the process alive (streams keep it busy while polls wait).
    session.unref();
    this.slots[i] = { session, openedAt: now };
    return session;
  }
}

function ignore(): void {}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason ?? "aborted"));
}

/**
 * What a held poll's stream carries: the internal headers (token, caller, request id), which are
 * all the events service reads of a poll. The client's own headers (user agent, accept, cookies)
 * would be encoded into every stream for nothing; a poll refused over HTTP/2 is repeated over
 * HTTP/1.1 with all of them.
 */
function h2Headers(headers: Record<string, string | string[]>): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = {};
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (lower.startsWith("x-chat-") || lower === "x-request-id") out[lower] = headers[name];
  }
  return out;
}
