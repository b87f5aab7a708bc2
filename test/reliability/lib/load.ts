import { apiClient, type ApiClient, type ApiResponse } from "@chat/testkit";

/**
 * A steady client load for fault tests: senders post channel messages one after another, pollers
 * long-poll their event queues the way a Zulip client does (retry on errors with the same
 * `last_event_id`, re-register on BAD_EVENT_QUEUE_ID). Everything a client saw is recorded so
 * the test can compare it with the server's history afterwards.
 */

export interface Credentials {
  email: string;
  api_key: string;
}

/** One finished client request: what it was, how it ended, when. */
export interface RequestRecord {
  kind: "send" | "poll" | "register";
  startedAt: number;
  endedAt: number;
  /** `success`, a Zulip error code, `HTTP_<status>` without one, or the network error's code. */
  outcome: string;
  status: number | null;
  /** The error's text (Zulip `msg`, body or exception), for the report's samples. */
  detail?: string;
  /** The gateway's request id, to find a failure in the services' logs. */
  requestId?: string;
}

export interface SendRecord {
  sender: string;
  seq: number;
  content: string;
  startedAt: number;
  endedAt: number;
  /** The message id when the server answered success. */
  id: number | null;
}

export interface TrackedQueue {
  owner: string;
  queueId: string;
  /** `max_message_id` of the register answer: the queue owes every later message of the topic. */
  maxMessageId: number;
  /** `last_event_id` of the register answer: where polling starts. */
  lastEventId: number;
  registeredAt: number;
  /** Event ids in arrival order (must increase strictly). */
  eventIds: number[];
  /** Message ids of the load topic, in arrival order, with the time each arrived. */
  messages: Array<{ id: number; content: string; at: number }>;
  /** Set when the server answered BAD_EVENT_QUEUE_ID: the queue is gone. */
  lostAt: number | null;
}

export interface LoadOptions {
  baseUrl: string;
  streamId: number;
  topic: string;
  senders: Record<string, Credentials>;
  pollers: Record<string, Credentials>;
  /** Pause between two sends of one sender. */
  sendPauseMs: number;
  /** A request taking longer than this is aborted and counted as TIMEOUT (a hang). */
  requestTimeoutMs: number;
  /** Long polls wait up to the heartbeat; they get this much on top of `requestTimeoutMs`. */
  pollSlackMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The error code a client would act on: Zulip's `code`, else the HTTP status, else the socket error. */
export function outcomeOf(res: ApiResponse | null, err?: unknown): string {
  if (res) {
    if (res.status === 200 && res.body?.result === "success") return "success";
    if (res.body && typeof res.body === "object" && typeof res.body.code === "string") return res.body.code;
    return `HTTP_${res.status}`;
  }
  const e = err as { name?: string; code?: string; cause?: { code?: string; name?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return "TIMEOUT";
  return e?.cause?.code ?? e?.code ?? e?.cause?.name ?? e?.name ?? "NETWORK_ERROR";
}

export class Load {
  readonly requests: RequestRecord[] = [];
  readonly sends: SendRecord[] = [];
  readonly queues: TrackedQueue[] = [];
  private stopSending = false;
  private stopPolling = false;
  private readonly pollTasks: Promise<void>[] = [];
  private readonly sendTasks: Promise<void>[] = [];
  private readonly clients = new Map<string, ApiClient>();
  /** Every message event seen by any poller, keyed by id, for recovery times. */
  readonly firstSeen = new Map<number, number>();

  constructor(private readonly opts: LoadOptions) {
    for (const [name, c] of Object.entries({ ...opts.senders, ...opts.pollers })) {
      this.clients.set(name, apiClient(opts.baseUrl, c.email, c.api_key));
    }
  }

  /** Registers every poller's queue (retrying until it works), then starts pollers and senders. */
  async start(): Promise<void> {
    const pollers = Object.keys(this.opts.pollers);
    const first = await Promise.all(pollers.map((name) => this.registerUntilDone(name, 30_000)));
    pollers.forEach((name, i) => this.pollTasks.push(this.pollLoop(name, first[i])));
    for (const name of Object.keys(this.opts.senders)) this.sendTasks.push(this.sendLoop(name));
  }

  /** Stops the senders and waits for their last request. */
  async stopSenders(): Promise<void> {
    this.stopSending = true;
    await Promise.all(this.sendTasks);
  }

  /**
   * Waits until every live queue has the events of every message the server accepted, or the
   * deadline passes; then stops the pollers.
   */
  async drain(expectedIds: () => Promise<number[]>, timeoutMs: number): Promise<void> {
    await this.stopSenders();
    const deadline = Date.now() + timeoutMs;
    // Done when the history stopped growing and every live queue has all of it.
    let previous = "";
    while (Date.now() < deadline) {
      const ids = await expectedIds().catch(() => null);
      const key = ids?.join(",") ?? "";
      const delivered = ids !== null && this.liveQueues().every((q) => ids.filter((id) => id > q.maxMessageId).every((id) => q.messages.some((m) => m.id === id)));
      if (delivered && key === previous) break;
      previous = key;
      await sleep(250);
    }
    this.stopPolling = true;
    await Promise.all(this.pollTasks);
  }

  liveQueues(): TrackedQueue[] {
    return this.queues.filter((q) => q.lostAt === null);
  }

  private async timed(kind: RequestRecord["kind"], run: (signal: AbortSignal) => Promise<ApiResponse>, timeoutMs: number) {
    const startedAt = Date.now();
    let res: ApiResponse | null = null;
    let err: unknown;
    try {
      res = await run(AbortSignal.timeout(timeoutMs));
    } catch (e) {
      err = e;
    }
    const outcome = outcomeOf(res, err);
    const rec: RequestRecord = { kind, startedAt, endedAt: Date.now(), outcome, status: res?.status ?? null };
    if (outcome !== "success") {
      rec.requestId = res?.headers["x-request-id"];
      rec.detail = res ? (typeof res.body === "string" ? res.body.slice(0, 200) : String(res.body?.msg ?? "")) : String((err as Error)?.message ?? err);
    }
    this.requests.push(rec);
    return { res, rec };
  }

  private async register(name: string): Promise<TrackedQueue | null> {
    const client = this.clients.get(name)!;
    const { res, rec } = await this.timed(
      "register",
      (signal) =>
        client.post("/register", { event_types: ["message"], fetch_event_types: ["message"], apply_markdown: false }, { signal }),
      this.opts.requestTimeoutMs,
    );
    if (rec.outcome !== "success") return null;
    const queue: TrackedQueue = {
      owner: name,
      queueId: res!.body.queue_id,
      maxMessageId: res!.body.max_message_id,
      lastEventId: res!.body.last_event_id,
      registeredAt: rec.endedAt,
      eventIds: [],
      messages: [],
      lostAt: null,
    };
    this.queues.push(queue);
    return queue;
  }

  private async registerUntilDone(name: string, timeoutMs: number): Promise<TrackedQueue> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const q = await this.register(name);
      if (q) return q;
      if (Date.now() > deadline) throw new Error(`${name} could not register a queue`);
      await sleep(200);
    }
  }

  private async pollLoop(name: string, first: TrackedQueue): Promise<void> {
    const client = this.clients.get(name)!;
    let queue: TrackedQueue | null = first;
    let lastEventId = first.lastEventId;
    while (!this.stopPolling) {
      if (!queue) {
        queue = await this.register(name);
        if (!queue) {
          await sleep(200);
          continue;
        }
        lastEventId = queue.lastEventId;
      }
      const q: TrackedQueue = queue;
      const { res, rec } = await this.timed(
        "poll",
        // dont_block once draining, so the loop ends promptly.
        (signal) => client.get("/events", { queue_id: q.queueId, last_event_id: lastEventId, ...(this.stopSending ? { dont_block: true } : {}) }, { signal }),
        this.opts.requestTimeoutMs + this.opts.pollSlackMs,
      );
      if (rec.outcome === "success") {
        for (const ev of res!.body.events as Array<{ id: number; type: string; message?: { id: number; content: string; subject?: string } }>) {
          q.eventIds.push(ev.id);
          lastEventId = Math.max(lastEventId, ev.id);
          if (ev.type === "message" && ev.message && ev.message.subject === this.opts.topic) {
            q.messages.push({ id: ev.message.id, content: ev.message.content, at: rec.endedAt });
            if (!this.firstSeen.has(ev.message.id)) this.firstSeen.set(ev.message.id, rec.endedAt);
          }
        }
        if (this.stopSending) await sleep(100);
      } else if (rec.outcome === "BAD_EVENT_QUEUE_ID") {
        q.lostAt = rec.endedAt;
        queue = null;
      } else {
        // Any other failure: the queue still owes us everything after lastEventId; try again.
        await sleep(150);
      }
    }
  }

  private async sendLoop(name: string): Promise<void> {
    const client = this.clients.get(name)!;
    let seq = 0;
    while (!this.stopSending) {
      seq += 1;
      const content = `${this.opts.topic} ${name} #${seq}`;
      const { res, rec } = await this.timed(
        "send",
        (signal) => client.post("/messages", { type: "stream", to: this.opts.streamId, topic: this.opts.topic, content }, { signal }),
        this.opts.requestTimeoutMs,
      );
      this.sends.push({
        sender: name,
        seq,
        content,
        startedAt: rec.startedAt,
        endedAt: rec.endedAt,
        id: rec.outcome === "success" ? (res!.body.id as number) : null,
      });
      await sleep(rec.outcome === "success" ? this.opts.sendPauseMs : Math.max(this.opts.sendPauseMs, 150));
    }
  }
}
