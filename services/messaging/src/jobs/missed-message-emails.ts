import { z } from "zod";
import { doMailNextDueBatch } from "../actions/missed-message-emails";
import type { AppDeps } from "../deps";
import { startPeriodicJob, type PeriodicJob } from "./periodic";

/**
 * Turns due missed-message rows into mails (actions/missed-message-emails.ts) in the background:
 * each messaging process looks every MISSED_MESSAGE_EMAIL_POLL_SECONDS; replicas share the work
 * (a row claimed by one is skipped by the others).
 */
export const missedMessageEmailConfigShape = {
  /**
   * How often each messaging process looks for missed-message email batches that are due. A
   * mail goes out up to this long after the user's batching period (Zulip's default 120 s) ends.
   */
  MISSED_MESSAGE_EMAIL_POLL_SECONDS: z.coerce.number().int().min(1).default(5),
};
export type MissedMessageEmailConfig = z.infer<z.ZodObject<typeof missedMessageEmailConfigShape>>;

export function loadMissedMessageEmailConfig(env: Record<string, string | undefined> = process.env): MissedMessageEmailConfig {
  return z.object(missedMessageEmailConfigShape).parse(env);
}

export type MissedMessageEmailJob = PeriodicJob;

export function startMissedMessageEmailJob(deps: AppDeps, config: MissedMessageEmailConfig): MissedMessageEmailJob {
  let stopping = false;
  const job = startPeriodicJob("missed-message emails", config.MISSED_MESSAGE_EMAIL_POLL_SECONDS, deps.log, async () => {
    const seen: number[] = [];
    while (!stopping && (await doMailNextDueBatch(deps, seen))) {
      /* the next due user */
    }
  });
  return {
    async stop() {
      stopping = true;
      await job.stop();
    },
  };
}
