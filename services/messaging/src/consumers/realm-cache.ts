import type { AmqpClient } from "@chat/platform";
import type { AppDeps } from "../deps";

export const REALM_CACHE_LISTENER = "messaging.realm-cache";

/**
 * Drops this process's cached organization settings and linkifiers when accounts announces a
 * change to them, and all of them after a reconnection (announcements may have been missed
 * meanwhile). Every replica listens on a queue of its own.
 */
export async function listenForRealmChanges(amqp: AmqpClient, deps: Pick<AppDeps, "accounts">): Promise<void> {
  await amqp.listen({
    name: REALM_CACHE_LISTENER,
    bindings: ["accounts.realm.updated", "accounts.linkifiers.changed"],
    handler: (envelope) => deps.accounts.forget(envelope.realm_id),
    onReady: () => deps.accounts.forgetAll(),
  });
}
