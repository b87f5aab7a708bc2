import { z } from "zod";
import { baseConfigShape, loadConfig, SERVICE_PORTS } from "@chat/platform";

export const schedulerConfigShape = {
  ...baseConfigShape,
  PORT: z.coerce.number().int().min(0).max(65535).default(SERVICE_PORTS.scheduler),
  /** How often the delivery loop looks for due scheduled messages. */
  DELIVERY_INTERVAL_MS: z.coerce.number().int().min(10).default(1000),
  /** Due messages one replica delivers in parallel (each in its own transaction). */
  DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** How often unused uploads are cleaned up (through messaging). */
  UPLOAD_CLEANUP_INTERVAL_MS: z.coerce.number().int().min(1000).default(60 * 60 * 1000),
  /** Uploads never linked from a message are deleted this many days after upload (Zulip: 5 weeks); those a pending scheduled message links are kept. */
  UNCLAIMED_UPLOAD_RETENTION_DAYS: z.coerce.number().min(0).default(35),
};

export type SchedulerConfig = ReturnType<typeof loadSchedulerConfig>;

export function loadSchedulerConfig(env: Record<string, string | undefined> = process.env) {
  return loadConfig(schedulerConfigShape, env);
}
