import { envBool } from "@chat/platform";
import { z } from "zod";
import { deliverNext } from "../actions/outgoing-webhooks";
import type { AppDeps } from "../deps";
import { onOutgoingWebhooks } from "../lib/outgoing-webhook-signal";

/**
 * Makes the outgoing webhook deliveries (actions/outgoing-webhooks.ts) in the background: up to
 * OUTGOING_WEBHOOK_CONCURRENCY at once per process, woken by this process's sends and by a timer
 * for the others' and for retries.
 */

export const outgoingWebhookConfigShape = {
  /** How long the bot's server has to answer (Zulip's OUTGOING_WEBHOOK_TIMEOUT_SECONDS). */
  OUTGOING_WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(10),
  /** Deliveries each messaging process makes at once. */
  OUTGOING_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  /** How often each process looks for due deliveries (a send in this process wakes it at once). */
  OUTGOING_WEBHOOK_POLL_SECONDS: z.coerce.number().int().min(1).default(5),
  /**
   * Let payload URLs reach private, loopback and link-local addresses (bots running inside the
   * cluster or on this host). Off: such a URL is refused as Zulip's Smokescreen refuses it.
   */
  OUTGOING_WEBHOOK_PRIVATE_ADDRESSES: envBool(false),
  /** The wait before the first retry of an unanswered delivery; the second waits 5 times this, the third 25 times. */
  OUTGOING_WEBHOOK_RETRY_MS: z.coerce.number().int().min(1).default(1000),
};
export type OutgoingWebhookConfig = z.infer<z.ZodObject<typeof outgoingWebhookConfigShape>>;

export function loadOutgoingWebhookConfig(env: Record<string, string | undefined> = process.env): OutgoingWebhookConfig {
  return z.object(outgoingWebhookConfigShape).parse(env);
}

export interface OutgoingWebhookJob {
  wake(): void;
  stop(): Promise<void>;
}

export function startOutgoingWebhookJob(deps: AppDeps, config: OutgoingWebhookConfig): OutgoingWebhookJob {
  let stopped = false;
  let workers = 0;
  const running = new Set<Promise<void>>();
  const work = async () => {
    while (!stopped && (await deliverNext(deps, config))) {
      /* the next due delivery */
    }
  };
  const wake = () => {
    while (!stopped && workers < config.OUTGOING_WEBHOOK_CONCURRENCY) {
      workers++;
      const p: Promise<void> = work()
        .catch((err) => deps.log.warn({ err: (err as Error).message }, "outgoing webhooks: pass failed; will retry"))
        .finally(() => {
          workers--;
          running.delete(p);
        });
      running.add(p);
    }
  };
  const unlisten = onOutgoingWebhooks(wake);
  const timer = setInterval(wake, config.OUTGOING_WEBHOOK_POLL_SECONDS * 1000);
  timer.unref();
  wake();
  return {
    wake,
    async stop() {
      stopped = true;
      unlisten();
      clearInterval(timer);
      await Promise.all(running);
    },
  };
}
