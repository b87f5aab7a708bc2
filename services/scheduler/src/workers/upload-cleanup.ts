import type { SchedulerDeps } from "../deps";
import { selectPendingUploadLinks } from "../store/scheduled-messages";

const DAY_MS = 24 * 60 * 60 * 1000;
const BATCH = 1000;

/**
 * The time-based clean-up of uploads never linked from a message. The scheduler owns the timer
 * (the design gives it every time-based job); messaging owns the data and does the deleting
 * through `POST /internal/attachments/clean_up`.
 */
export class UploadCleanup {
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<number> | null = null;
  private running = false;

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly opts: { intervalMs: number; retentionDays: number },
  ) {}

  start(): void {
    this.running = true;
    const tick = async () => {
      await this.runOnce().catch((err) => this.deps.log.warn({ err: (err as Error).message }, "upload clean-up failed; will retry"));
      if (this.running) this.timer = setTimeout(tick, this.opts.intervalMs);
    };
    this.timer = setTimeout(tick, Math.min(this.opts.intervalMs, 10_000));
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current?.catch(() => {});
  }

  /** Deletes every expired unused upload; returns how many. */
  runOnce(): Promise<number> {
    if (this.current) return this.current;
    this.current = (async () => {
      const cutoff = Math.floor((this.deps.clock.now().getTime() - this.opts.retentionDays * DAY_MS) / 1000);
      // Uploads a pending scheduled message links stay, as in Zulip: the message will claim them.
      const keep = await selectPendingUploadLinks(this.deps.pool);
      let total = 0;
      for (;;) {
        const { deleted } = await this.deps.messaging.cleanUpAttachments(cutoff, BATCH, keep);
        total += deleted;
        if (deleted < BATCH) return total;
      }
    })().finally(() => {
      this.current = null;
    });
    return this.current;
  }
}
