import { z } from "zod";
import { doDeleteExpiredBatch } from "../actions/retention";
import type { AppDeps } from "../deps";
import { selectRealmsWithMessages, selectStreamRetention } from "../store/retention";

/**
 * Message retention (spec section 3): messages older than their channel's
 * `message_retention_days` (null inherits the organization's setting; -1 keeps forever) are
 * deleted, direct messages by the organization's setting (null or -1: forever). Time comes from
 * `deps.clock`, so tests move it instead of waiting.
 */

export const retentionConfigShape = {
  /** How often the job runs (Zulip runs its archiving daily; an hour keeps expiry prompt). */
  RETENTION_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(3600),
  /** Messages deleted per transaction. */
  RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(1000),
};
export type RetentionConfig = z.infer<z.ZodObject<typeof retentionConfigShape>>;

export function loadRetentionConfig(env: Record<string, string | undefined> = process.env): RetentionConfig {
  return z.object(retentionConfigShape).parse(env);
}

const DAY_MS = 86_400_000;
/** The days a channel's messages are kept; null when forever. */
export function effectiveRetention(streamDays: number | null, realmDays: number | null): number | null {
  const days = streamDays ?? realmDays;
  return days === null || days < 0 ? null : days;
}

/** One pass over every organization; returns how many messages it deleted. */
export async function runRetentionOnce(deps: AppDeps, batchSize = 1000): Promise<number> {
  let deleted = 0;
  const now = deps.clock.now().getTime();
  for (const realmId of await selectRealmsWithMessages(deps.pool)) {
    let realmDays: number | null;
    try {
      realmDays = (await deps.accounts.getRealm(realmId)).settings.message_retention_days;
    } catch (err) {
      // One organization that cannot be looked up must not stop the others.
      deps.log.warn({ err: (err as Error).message, realmId }, "retention: organization settings unavailable; skipped");
      continue;
    }
    const targets: Array<{ streamId: number | null; days: number | null }> = (await selectStreamRetention(deps.pool, realmId)).map((s) => ({
      streamId: s.id,
      days: effectiveRetention(s.days, realmDays),
    }));
    targets.push({ streamId: null, days: effectiveRetention(null, realmDays) });
    for (const { streamId, days } of targets) {
      if (days === null) continue;
      // Past the start of 1970 nothing is old enough (and far enough a Date is invalid).
      const cutoffMs = now - days * DAY_MS;
      if (!(cutoffMs > 0)) continue;
      const cutoff = new Date(cutoffMs);
      for (;;) {
        const n = await doDeleteExpiredBatch(deps, realmId, streamId, cutoff, batchSize);
        deleted += n;
        if (n < batchSize) break;
      }
    }
  }
  return deleted;
}

/** Runs the pass every interval (never two at once in this process); `stop` waits for a running pass. */
export function startRetentionJob(deps: AppDeps, config: RetentionConfig): { stop: () => Promise<void> } {
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    running = runRetentionOnce(deps, config.RETENTION_BATCH_SIZE)
      .then((n) => {
        if (n) deps.log.info({ deleted: n }, "retention: deleted expired messages");
      })
      .catch((err) => deps.log.warn({ err: (err as Error).message }, "retention pass failed; will retry"))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, config.RETENTION_INTERVAL_SECONDS * 1000);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
