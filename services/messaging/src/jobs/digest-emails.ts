import { z } from "zod";
import { doSendDigestEmails } from "../actions/digest-emails";
import type { AppDeps } from "../deps";
import { startPeriodicJob, type PeriodicJob } from "./periodic";

/**
 * Makes the weekly digest emails (actions/digest-emails.ts) in the background: each messaging
 * process looks every DIGEST_EMAIL_POLL_SECONDS for the organizations whose digest weekday it is
 * (UTC); replicas share the work (a user's digest is claimed once a week).
 */
export const digestEmailConfigShape = {
  /**
   * How often each messaging process looks for users due a weekly digest email. On an
   * organization's digest weekday (UTC), its users who have been away get theirs within this long
   * of midnight UTC, or of becoming due later that day; each look asks accounts who is away.
   */
  DIGEST_EMAIL_POLL_SECONDS: z.coerce.number().int().min(1).default(600),
};
export type DigestEmailConfig = z.infer<z.ZodObject<typeof digestEmailConfigShape>>;

export function loadDigestEmailConfig(env: Record<string, string | undefined> = process.env): DigestEmailConfig {
  return z.object(digestEmailConfigShape).parse(env);
}

export type DigestEmailJob = PeriodicJob;

export function startDigestEmailJob(deps: AppDeps, config: DigestEmailConfig): DigestEmailJob {
  return startPeriodicJob("digest emails", config.DIGEST_EMAIL_POLL_SECONDS, deps.log, async () => {
    const mailed = await doSendDigestEmails(deps);
    if (mailed > 0) deps.log.info({ mailed }, "digest emails queued");
  });
}
