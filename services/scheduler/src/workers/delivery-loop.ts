import type { ApiError } from "@chat/platform";
import { deliverNextDue, type DeliveryHooks } from "../actions/delivery";
import type { SchedulerDeps } from "../deps";

export interface PassResult {
  delivered: number;
  failed: number;
  /** Messages put off by a retryable answer (present when there were some). */
  deferred?: number;
  /** Set when a pass stopped early on an outage; what remains is retried on the next pass. */
  error?: string;
}

/** The longest a message waits between two retries after retryable answers. */
const MAX_RETRY_DELAY_MS = 5 * 60_000;

/**
 * Runs delivery passes on a timer. A pass delivers everything due (several claimers in parallel,
 * each row in its own transaction) and stops early when a service is unreachable: then nothing
 * else would go either. A retryable answer about one message (a rate limit, a timeout, a refused
 * internal call) puts that message off, with a delay that doubles with each retry, and the pass
 * goes on with the others; the message still holds back its sender's later ones, which keep
 * their order. Any number of replicas may run this against one database; each keeps its own
 * retry delays.
 */
export class DeliveryLoop {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private current: Promise<PassResult> | null = null;
  /** Per put-off message: how many retries in a row, and the time (clock ms) before which it waits. */
  private readonly retries = new Map<number, { count: number; until: number }>();

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly opts: { intervalMs: number; concurrency: number; hooks?: DeliveryHooks },
  ) {}

  start(): void {
    this.running = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current?.catch(() => {});
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = setTimeout(async () => {
      this.timer = null;
      await this.runPass().catch(() => {});
      this.schedule(this.opts.intervalMs);
    }, ms);
  }

  /** One pass; tests call it directly after moving the clock. */
  runPass(): Promise<PassResult> {
    if (this.current) return this.current;
    this.current = this.pass().finally(() => {
      this.current = null;
    });
    return this.current;
  }

  private async pass(): Promise<PassResult> {
    const result: PassResult = { delivered: 0, failed: 0 };
    const passed = this.waiting();
    let stop = false;
    const claimer = async () => {
      while (!stop) {
        try {
          const r = await deliverNextDue(this.deps, this.opts.hooks, passed);
          if (r.outcome === "idle") return;
          if (r.outcome === "skipped") continue;
          if (r.outcome === "deferred") {
            this.putOff(r.id, r.error);
            result.deferred = (result.deferred ?? 0) + 1;
            continue;
          }
          // Done with: it cannot match again, and need not lengthen the next claims' exclusions.
          passed.delete(r.id);
          this.retries.delete(r.id);
          result[r.outcome]++;
        } catch (err) {
          stop = true;
          result.error = (err as Error).message;
          this.deps.log.warn({ err: result.error }, "delivery pass stopped; will retry");
        }
      }
    };
    await Promise.all(Array.from({ length: this.opts.concurrency }, claimer));
    if (result.delivered || result.failed) this.deps.log.info(result, "scheduled messages delivered");
    return result;
  }

  /** The messages still waiting out their delay; forgets those put off long ago (gone, or sent elsewhere). */
  private waiting(): Set<number> {
    const now = this.deps.clock.now().getTime();
    const ids = new Set<number>();
    for (const [id, r] of this.retries) {
      if (r.until > now) ids.add(id);
      else if (now - r.until > MAX_RETRY_DELAY_MS) this.retries.delete(id);
    }
    return ids;
  }

  private putOff(id: number, err: ApiError): void {
    const count = (this.retries.get(id)?.count ?? 0) + 1;
    const backoff = Math.min(this.opts.intervalMs * 2 ** (count - 1), MAX_RETRY_DELAY_MS);
    // A rate limit says when to come back (Zulip's `retry-after`, in seconds).
    const retryAfter = Number(err.extra["retry-after"]);
    const delay = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(Math.max(backoff, retryAfter * 1000), MAX_RETRY_DELAY_MS) : backoff;
    this.retries.set(id, { count, until: this.deps.clock.now().getTime() + delay });
    // 408 and 429 pass by themselves; 401 and 404 from an internal route mean a wrong token or a
    // peer of another version, which an operator has to fix.
    const transient = err.status === 408 || err.status === 429;
    this.deps.log[transient ? "warn" : "error"](
      { scheduledMessageId: id, status: err.status, err: err.message, retryInMs: delay },
      transient ? "scheduled message put off; will retry" : "internal call refused (configuration?); scheduled message put off",
    );
  }
}
