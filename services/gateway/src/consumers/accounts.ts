import {
  AccountsApiKeyReset,
  AccountsRealmDeactivated,
  AccountsUserDeactivated,
  AccountsUserUpdated,
  type DomainEnvelope,
} from "@chat/contracts";
import { InvalidMessageError, type AmqpClient, type Logger } from "@chat/platform";
import type { AuthCache } from "../auth/cache";

export const AUTH_CACHE_QUEUE = "gateway.auth-cache";

/** Events after which a cached credential check may be wrong (role, key, active state). */
export const AUTH_CACHE_BINDINGS = [
  "accounts.user.updated",
  "accounts.user.deactivated",
  "accounts.api_key.reset",
  "accounts.realm.deactivated",
];

/** Drops cached credential checks when accounts says they changed. Idempotent by nature. */
export async function handleAccountsEvent(cache: AuthCache, envelope: DomainEnvelope): Promise<void> {
  const parse = <T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } }): T => {
    const result = schema.safeParse(envelope.payload);
    if (!result.success) throw new InvalidMessageError(`bad ${envelope.type} payload`);
    return result.data;
  };
  switch (envelope.type) {
    case "accounts.user.updated":
    case "accounts.user.deactivated": {
      const { user } = parse(envelope.type === "accounts.user.updated" ? AccountsUserUpdated : AccountsUserDeactivated);
      await cache.invalidateUser(user.realm_id, user.user_id);
      return;
    }
    case "accounts.api_key.reset": {
      const { user_id } = parse(AccountsApiKeyReset);
      await cache.invalidateUser(envelope.realm_id, user_id);
      return;
    }
    case "accounts.realm.deactivated": {
      const { realm_id } = parse(AccountsRealmDeactivated);
      await cache.invalidateRealm(realm_id);
      return;
    }
  }
}

export async function consumeAccountsEvents(amqp: AmqpClient, cache: AuthCache, log: Logger): Promise<void> {
  await amqp.consume({
    name: AUTH_CACHE_QUEUE,
    bindings: AUTH_CACHE_BINDINGS,
    handler: async (envelope) => {
      await handleAccountsEvent(cache, envelope);
      log.debug({ type: envelope.type, id: envelope.id }, "auth cache invalidated");
    },
  });
}
