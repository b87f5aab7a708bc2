import { z } from "zod";
import { baseConfigShape, loadConfig, mailConfigShape, organizationHostsShape, SERVICE_PORTS } from "@chat/platform";

export const messagingConfigShape = {
  ...baseConfigShape,
  PORT: z.coerce.number().int().min(0).max(65535).default(SERVICE_PORTS.messaging),
  /**
   * How long an organization's settings and linkifiers fetched from accounts are reused at most.
   * Each replica drops its copies as soon as accounts announces a change (or after it reconnected
   * to RabbitMQ); this bounds their age should an announcement be lost.
   */
  REALM_CACHE_MS: z.coerce.number().int().min(0).default(5000),
  /**
   * The public URL clients reach (the gateway), as accounts has it: the base of the message links
   * in the notices of moved messages and in notification emails.
   */
  EXTERNAL_URL: z.string().url().default(`http://127.0.0.1:${SERVICE_PORTS.gateway}`),
  ...organizationHostsShape,
  /** Mail (missed-message email notifications) goes out through this SMTP server, as accounts' does. */
  ...mailConfigShape,
};

export type MessagingConfig = ReturnType<typeof loadMessagingConfig>;

export function loadMessagingConfig(env: Record<string, string | undefined> = process.env) {
  return loadConfig(messagingConfigShape, env);
}
