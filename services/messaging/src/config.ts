import { z } from "zod";
import { baseConfigShape, loadConfig, SERVICE_PORTS } from "@chat/platform";

export const messagingConfigShape = {
  ...baseConfigShape,
  PORT: z.coerce.number().int().min(0).max(65535).default(SERVICE_PORTS.messaging),
  /** How long an organization's settings fetched from accounts are reused. */
  REALM_CACHE_MS: z.coerce.number().int().min(0).default(5000),
};

export type MessagingConfig = ReturnType<typeof loadMessagingConfig>;

export function loadMessagingConfig(env: Record<string, string | undefined> = process.env) {
  return loadConfig(messagingConfigShape, env);
}
