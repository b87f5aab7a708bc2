import { z } from "zod";
import { baseConfigShape, envBool, loadConfig, mailConfigShape, organizationHostsShape, SERVICE_PORTS } from "@chat/platform";

export const accountsConfigShape = {
  ...baseConfigShape,
  PORT: z.coerce.number().int().min(1).max(65535).default(SERVICE_PORTS.accounts),
  /** The public URL clients reach (the gateway): realm_url in register and server_settings, the base of invitation links; with `ORGANIZATION_SUBDOMAINS`, each organization's host is below its host. */
  EXTERNAL_URL: z.string().url().default(`http://127.0.0.1:${SERVICE_PORTS.gateway}`),
  ...organizationHostsShape,
  ...mailConfigShape,
  /** Invitations per organization per 24 h when the realm sets no limit of its own. */
  INVITES_DAILY_LIMIT: z.coerce.number().int().min(0).default(100),
  /**
   * In an organization that does not require invitations (`invite_required` false), how many days
   * old an account must be before it may send email invitations; administrators are exempt
   * (Zulip's `INVITES_MIN_USER_AGE_DAYS`, which keeps new accounts from sending spam invitations).
   */
  INVITES_MIN_USER_AGE_DAYS: z.coerce.number().min(0).default(3),
  /** Default validity of an invitation (Zulip: 10 days). */
  INVITATION_VALIDITY_MINUTES: z.coerce.number().int().min(1).default(14400),
  /**
   * Whether a push notification service is configured: reported as `push_notifications_enabled`
   * by `GET /server_settings` and register; without one, `POST /mobile_push/test_notification`
   * answers `PUSH_SERVICE_NOT_CONFIGURED`.
   */
  PUSH_NOTIFICATIONS_ENABLED: envBool(false),
  /**
   * Largest accepted upload, in MiB (Zulip's `max_file_upload_size_mib`). Messaging enforces it;
   * accounts reports it in register, so set both services to the same value.
   */
  MAX_FILE_UPLOAD_SIZE_MIB: z.coerce.number().positive().max(100 * 1024).default(100),
  /**
   * Users whose formatted objects this process keeps for register and GET /users, over all
   * organizations (about 1 KB each; least recently used organizations are dropped first).
   */
  USER_LIST_CACHE_USERS: z.coerce.number().int().min(0).default(50000),
  /**
   * Whether an organization's can_access_all_users_group limits presence too (Zulip's server
   * setting of this name): a guest limited to some users gets no presence of the others, in
   * register, the presence endpoints and presence events. Zulip leaves it off by default; here it
   * is on, so that nothing of an inaccessible user reaches such a guest.
   */
  CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE: envBool(true),
  /** scrypt cost (N) for passwords; tests may lower it. */
  PASSWORD_SCRYPT_COST: z.coerce.number().int().min(1024).default(16384),
};

export type AccountsConfig = z.infer<z.ZodObject<typeof accountsConfigShape>>;

export function loadAccountsConfig(env: Record<string, string | undefined> = process.env): AccountsConfig {
  return loadConfig(accountsConfigShape, env);
}
