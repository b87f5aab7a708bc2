import { deliverNextDue, type DeliveryHooks } from "../actions/delivery";
import type { SchedulerDeps } from "../deps";

export interface PassResult {
  delivered: number;
  failed: number;
  /** Set when a pass stopped early on an outage; what remains is retried on the next pass. */
  error?: string;
}

/**
 * Runs delivery passes on a timer. A pass delivers everything due (several claimers in parallel,
 * each row in its own transaction) and stops early when a service is unreachable. Any number of
 * replicas may run this against one database.
 */
export class DeliveryLoop {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private current: Promise<PassResult> | null = null;

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
    let stop = false;
    const claimer = async () => {
      while (!stop) {
        try {
          const outcome = await deliverNextDue(this.deps, this.opts.hooks);
          if (outcome === "idle") return;
          result[outcome]++;
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
}
