import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "@chat/contracts";
import type { Clock, Logger } from "@chat/platform";
import { acceptsEvent } from "../lib/queue-filter";
import type { QueueStore } from "../store/queues";

const SWEEP_BATCH = 500;

/**
 * Removes queues nobody polled within their lifespan. Every instance runs one; the removal is an
 * atomic script that re-checks each queue, so instances never race each other into a bad state.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly store: QueueStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  /** One pass; returns the removed queue ids. */
  async sweepOnce(): Promise<string[]> {
    const removed: string[] = [];
    for (;;) {
      const batch = await this.store.sweep(this.clock.now().getTime(), SWEEP_BATCH);
      removed.push(...batch);
      if (batch.length < SWEEP_BATCH) break;
    }
    if (removed.length) this.log.info({ count: removed.length }, "expired event queues removed");
    return removed;
  }

  start(): void {
    const tick = () => {
      // Jitter spreads several instances' passes apart.
      this.timer = setTimeout(() => {
        this.running = this.sweepOnce()
          .catch((err) => this.log.warn({ err: (err as Error).message }, "queue sweep failed"))
          .finally(() => {
            this.running = null;
            if (this.timer) tick();
          });
      }, this.intervalMs * (0.9 + Math.random() * 0.2));
      this.timer.unref();
    };
    tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}

/** The running server's version, as clients compare it. */
export const serverVersionKey = `${ZULIP_VERSION}/${ZULIP_FEATURE_LEVEL}`;

/**
 * After an upgrade, tell every queue's client (Zulip's `restart` event) so it can re-register.
 * Queues survive instance restarts in Redis, so a plain restart of the same version is silent.
 * Only the first instance of the new version to swap the stored version sends it.
 */
export async function notifyRestartIfUpgraded(store: QueueStore, clock: Clock, log: Logger): Promise<number> {
  const previous = await store.getSet("server_version", serverVersionKey);
  if (previous === null || previous === serverVersionKey) return 0;
  const event = {
    type: "restart",
    zulip_version: ZULIP_VERSION,
    zulip_merge_base: ZULIP_MERGE_BASE,
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    server_generation: Math.floor(clock.now().getTime() / 1000),
    immediate: false,
  };
  const descriptors = await store.descriptors(await store.allQueueIds());
  const queues = [...descriptors.values()].filter((q) => acceptsEvent(q, event)).map((q) => q.id);
  const n = await store.broadcast(JSON.stringify(event), queues);
  log.info({ previous, current: serverVersionKey, queues: n }, "server upgraded; restart events sent");
  return n;
}
