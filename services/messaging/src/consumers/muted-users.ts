import { AccountsMutedUsersChanged } from "@chat/contracts";
import { oncePerEvent, type AmqpClient } from "@chat/platform";
import { doReplicateMutedUsers } from "../actions/muted-users";
import type { AppDeps } from "../deps";

export const MUTED_USERS_CONSUMER = "messaging.muted-users";

/** Keeps the muted users replica current (idempotent per envelope id; older versions never win). */
export async function consumeMutedUsers(amqp: AmqpClient, deps: AppDeps): Promise<void> {
  await amqp.consume({
    name: MUTED_USERS_CONSUMER,
    bindings: ["accounts.muted_users.changed"],
    handler: async (envelope) => {
      // A payload that breaks the contract throws a ZodError: dead-lettered, never retried.
      const p = AccountsMutedUsersChanged.parse(envelope.payload);
      await oncePerEvent(deps.pool, MUTED_USERS_CONSUMER, envelope.id, (tx) =>
        doReplicateMutedUsers(tx, envelope.realm_id, p.user_id, p.muted_users.map((m) => m.id), p.version),
      );
    },
  });
}
