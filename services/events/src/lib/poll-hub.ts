import { serviceUnavailable, type Logger, type Redis } from "@chat/platform";

/** Longest wait for the subscriber connection to become ready before a poll answers 503. */
const SUBSCRIBER_READY_TIMEOUT_MS = 5000;

/**
 * How long a queue's channel stays subscribed after its last poll ended. Clients poll again as
 * soon as an answer arrives, so the next poll finds the channel subscribed and skips a SUBSCRIBE
 * round trip before its fetch (and the UNSUBSCRIBE after the previous poll).
 */
const LINGER_MS = 10_000;

/** Why a waiting poll stops waiting. */
export type WakeReason = "events" | "release" | "deleted" | "dropped" | "heartbeat" | "aborted";

/** What a waiter tells when its poll should stop waiting. */
export interface WakeTarget {
  onWake(reason: WakeReason): void;
}

/**
 * One waiting poll's view of its queue's wake channel. Messages published before the poll's own
 * fetch ran are stale (that fetch already saw their effect); the fetch publishes `r:<token>`,
 * and everything after that echo counts. Events pushed after the fetch arrive in their wake-ups
 * (`E` and their JSON texts, see scripts.ts) and are kept for the poll's answer. Callbacks
 * rather than promises: an instance holds thousands of these, and each is kept small.
 */
export class Waiter {
  private armed = false;
  private pending: WakeReason | null = null;
  private target: WakeTarget | null = null;
  /** Its heartbeat's bucket in the hub's deadlines (0: none). */
  private due = 0;
  /** Events carried by wake-ups since the echo, as their JSON texts. */
  private carried: string[] | null = null;

  constructor(
    readonly channel: string,
    readonly token: string,
    private readonly hub: PollHub,
  ) {}

  /** Called by the hub for each message on the channel. */
  receive(message: string): void {
    if (message.startsWith("r:")) {
      if (message.length === this.token.length + 2 && message.endsWith(this.token)) this.armed = true;
      else if (this.armed) this.wake("release");
      return;
    }
    if (!this.armed) return;
    if (message.startsWith("E")) {
      const texts = message.slice(1).split("\n");
      if (this.carried) this.carried.push(...texts);
      else this.carried = texts;
      this.wake("events");
    } else if (message === "e") this.wake("events");
    else if (message === "d") this.wake("deleted");
    else if (message === "x") this.wake("dropped");
  }

  /** The events carried since the last call (null when none were). */
  takeCarried(): string[] | null {
    const texts = this.carried;
    this.carried = null;
    return texts;
  }

  wake(reason: WakeReason): void {
    // A terminal reason is never replaced by a weaker one.
    if (this.pending && this.pending !== "events") return;
    this.pending = reason;
    if (this.target) queueMicrotask(() => this.fire());
  }

  /**
   * Tells `target` the next reason once: one already pending, the next to come, or the
   * heartbeat after `timeoutMs` (up to DEADLINE_STEP_MS later).
   */
  listen(timeoutMs: number, target: WakeTarget): void {
    this.target = target;
    if (this.pending) queueMicrotask(() => this.fire());
    else this.due = this.hub.deadlines.add(this, Date.now() + Math.max(0, timeoutMs));
  }

  /** Its heartbeat is due (called by the hub's deadlines, which have already let it go). */
  deadlinePassed(): void {
    this.due = 0;
    this.wake("heartbeat");
  }

  private fire(): void {
    const target = this.target;
    if (!target) return;
    this.target = null;
    this.dropDeadline();
    const reason = this.pending ?? "heartbeat";
    this.pending = null;
    target.onWake(reason);
  }

  private dropDeadline(): void {
    if (this.due) this.hub.deadlines.remove(this, this.due);
    this.due = 0;
  }

  close(): void {
    this.dropDeadline();
    this.target = null;
    this.hub.unwatch(this);
  }
}

/** How late a held poll's heartbeat may fire: the resolution of the hub's deadlines. */
const DEADLINE_STEP_MS = 100;

/**
 * The heartbeat deadlines of listening waiters, in buckets of DEADLINE_STEP_MS, with one timer
 * for all of them, set for the earliest bucket. A timer per poll cost a Timeout object each, and
 * with jittered holds nearly every poll had a timer list of its own (Node keeps one per
 * distinct duration).
 */
export class Deadlines {
  private readonly buckets = new Map<number, Set<Waiter>>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;

  /** Files `w` under the first bucket at or after `at`; returns that bucket's key. */
  add(w: Waiter, at: number): number {
    const key = Math.ceil(at / DEADLINE_STEP_MS) * DEADLINE_STEP_MS;
    let set = this.buckets.get(key);
    if (!set) {
      set = new Set();
      this.buckets.set(key, set);
    }
    set.add(w);
    if (key < this.timerAt) this.schedule(key);
    return key;
  }

  remove(w: Waiter, key: number): void {
    const set = this.buckets.get(key);
    if (set?.delete(w) && set.size === 0) this.buckets.delete(key);
  }

  private schedule(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  private tick(): void {
    this.timer = null;
    this.timerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const [key, set] of this.buckets) {
      if (key > now) {
        next = Math.min(next, key);
        continue;
      }
      this.buckets.delete(key);
      for (const w of set) w.deadlinePassed();
    }
    if (next !== Infinity) this.schedule(next);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
  }
}

/**
 * Wake-ups for the polls held by this instance: one Redis subscriber connection, one channel per
 * queue with a waiting poll, subscribed before the poll's fetch so no publish is missed.
 */
export class PollHub {
  readonly deadlines = new Deadlines();
  /** Each channel's waiters: one, nearly always, or a set while a newer poll replaces a waiting one. */
  private readonly waiters = new Map<string, Waiter | Set<Waiter>>();
  /** Serializes SUBSCRIBE/UNSUBSCRIBE per channel. */
  private readonly ops = new Map<string, Promise<void>>();
  /** Channels Redis confirmed as subscribed (and not unsubscribed since). */
  private readonly subscribed = new Set<string>();
  /**
   * Subscribed channels without a waiter, with when to unsubscribe them, oldest first (each
   * lingers as long, and a channel is added only when it has none): one timer serves them all,
   * instead of one per channel when a fan-out answers thousands of polls at once.
   */
  private readonly lingering = new Map<string, number>();
  private lingerTimer: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(
    private readonly sub: Redis,
    private readonly log: Logger,
    private readonly lingerMs = LINGER_MS,
  ) {
    sub.on("message", (channel: string, message: string) => {
      const waiting = this.waiters.get(channel);
      if (waiting instanceof Waiter) waiting.receive(message);
      else if (waiting) for (const w of waiting) w.receive(message);
    });
  }

  get held(): number {
    let n = 0;
    for (const waiting of this.waiters.values()) n += waiting instanceof Waiter ? 1 : waiting.size;
    return n;
  }

  /** Subscribes (resolving once Redis confirmed) and returns the poll's waiter. */
  async watch(channel: string, token: string): Promise<Waiter> {
    const waiter = new Waiter(channel, token, this);
    const waiting = this.waiters.get(channel);
    const first = !waiting;
    if (!waiting) this.waiters.set(channel, waiter);
    else if (waiting instanceof Waiter) this.waiters.set(channel, new Set([waiting, waiter]));
    else waiting.add(waiter);
    if (this.closing) waiter.wake("heartbeat");
    this.lingering.delete(channel);
    try {
      if (first)
        await this.serialize(channel, async () => {
          // Decided in the serialized op, so a queued UNSUBSCRIBE has run by now.
          if (this.subscribed.has(channel) && this.sub.status === "ready") return;
          await this.ready();
          await this.sub.subscribe(channel);
          this.subscribed.add(channel);
        });
      else await this.ops.get(channel);
    } catch (err) {
      waiter.close();
      throw err;
    }
    return waiter;
  }

  /** Forgets a closed waiter; the channel's subscription lingers a while (see LINGER_MS). */
  unwatch(w: Waiter): void {
    const waiting = this.waiters.get(w.channel);
    if (waiting instanceof Set) {
      if (waiting.delete(w) && waiting.size === 1) this.waiters.set(w.channel, waiting.values().next().value as Waiter);
      return;
    }
    if (waiting !== w) return;
    this.waiters.delete(w.channel);
    if (this.closing) this.unsubscribe(w.channel);
    else {
      this.lingering.set(w.channel, Date.now() + this.lingerMs);
      this.scheduleLingerSweep();
    }
  }

  private scheduleLingerSweep(): void {
    if (this.lingerTimer || this.lingering.size === 0) return;
    const oldest = this.lingering.values().next().value as number;
    this.lingerTimer = setTimeout(() => this.sweepLingering(), Math.max(0, oldest - Date.now()));
    this.lingerTimer.unref();
  }

  private sweepLingering(): void {
    this.lingerTimer = null;
    const now = Date.now();
    for (const [channel, until] of this.lingering) {
      if (until > now) break;
      this.lingering.delete(channel);
      this.unsubscribe(channel);
    }
    this.scheduleLingerSweep();
  }

  private unsubscribe(channel: string): void {
    this.serialize(channel, async () => {
      // Someone started watching again while we queued: keep the subscription.
      if (this.waiters.has(channel) || !this.subscribed.has(channel)) return;
      this.subscribed.delete(channel);
      await this.sub.unsubscribe(channel);
    }).catch(() => {}); // logged by serialize
  }

  /**
   * Resolves once the subscriber connection is ready. ioredis writes SUBSCRIBE on a connection
   * still in its handshake (after a start or a Redis reconnect); the reply switches it to
   * subscriber mode, its ready check then fails and the poll got a 500.
   */
  private ready(): Promise<void> {
    if (this.sub.status === "ready") return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.sub.off("ready", onReady);
      };
      const onReady = () => (done(), resolve());
      const timer = setTimeout(() => (done(), reject(serviceUnavailable())), SUBSCRIBER_READY_TIMEOUT_MS);
      this.sub.on("ready", onReady);
    });
  }

  /** Runs `op` after the channel's earlier operations; the returned promise carries its failure. */
  private serialize(channel: string, op: () => Promise<unknown>): Promise<void> {
    const prev = this.ops.get(channel) ?? Promise.resolve();
    const result = prev.then(op).then(() => undefined);
    const settled = result.catch((err) => this.log.warn({ err: (err as Error).message, channel }, "pub/sub operation failed"));
    this.ops.set(channel, settled);
    void settled.then(() => {
      if (this.ops.get(channel) === settled) this.ops.delete(channel);
    });
    return result;
  }

  /** Graceful shutdown: every held poll answers now with a heartbeat; new ones do too. */
  releaseAll(): void {
    this.closing = true;
    for (const waiting of this.waiters.values()) {
      if (waiting instanceof Waiter) waiting.wake("heartbeat");
      else for (const w of waiting) w.wake("heartbeat");
    }
  }

  async close(): Promise<void> {
    this.releaseAll();
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
    this.lingering.clear();
    this.deadlines.stop();
    await Promise.all([...this.ops.values()]);
    this.sub.disconnect();
  }
}
