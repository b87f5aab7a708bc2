import { ApiError, badRequest } from "@chat/platform";

/**
 * An organization's authentication methods, by Zulip's backend names (register's
 * `realm_authentication_methods`; GET /server_settings has the lower-case form). Only what this
 * server offers is listed, as Zulip lists only its configured backends: email and password, which
 * is always on, since nothing else could sign anyone in.
 */
export const REALM_AUTHENTICATION_METHODS: Readonly<Record<string, { enabled: boolean; available: boolean }>> = {
  Email: { enabled: true, available: true },
};

/**
 * PATCH /realm `authentication_methods`, as Zulip's update_realm checks it: owners only, every
 * name one this server offers, at least one enabled. With email the only method, a valid request
 * never changes anything.
 */
export function checkAuthenticationMethods(given: Record<string, boolean>, isOwner: boolean): void {
  if (!isOwner) throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(REALM_AUTHENTICATION_METHODS, name)) throw badRequest(`Invalid authentication method: ${name}.`);
  }
  if (!Object.values(given).includes(true)) throw badRequest("At least one authentication method must be enabled.");
}
