import { performance } from "node:perf_hooks";

/**
 * When this process last fetched each queue for a blocking poll, by its own monotonic clock. A
 * poll that comes sooner than the queue's poll interval after that waits here first, instead of
 * asking Redis, which would only answer "wait" (under load, nearly every poll of a busy client
 * did: two fetches per answer). Redis's FETCH stays the judge: another instance may have fetched
 * the queue since, and then Redis asks for the rest of the wait.
 *
 * The times live in two maps swapped every interval, so a time is dropped one to two intervals
 * after it was set, with no timer and no sweep: only queues polled in the last moments are here.
 */
export class PaceHints {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  private swappedAt = performance.now();

  constructor(private readonly intervalMs: number) {}

  /** How long a blocking poll of the queue should wait before fetching (0: fetch now). */
  waitMs(queueId: string): number {
    if (this.intervalMs <= 0) return 0;
    const now = this.swap();
    const at = this.current.get(queueId) ?? this.previous.get(queueId);
    return at === undefined ? 0 : Math.max(0, Math.ceil(at + this.intervalMs - now));
  }

  /** A blocking fetch of the queue was answered (Redis recorded it just before). */
  fetched(queueId: string): void {
    if (this.intervalMs <= 0) return;
    this.current.set(queueId, this.swap());
  }

  private swap(): number {
    const now = performance.now();
    if (now - this.swappedAt >= this.intervalMs) {
      // Past two intervals everything is stale: start both over.
      this.previous = now - this.swappedAt >= 2 * this.intervalMs ? new Map() : this.current;
      this.current = new Map();
      this.swappedAt = now;
    }
    return now;
  }
}
