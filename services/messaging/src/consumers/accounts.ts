import { AccountsUserCreated, AccountsUserDeactivated, AccountsUserUpdated } from "@chat/contracts";
import { InvalidMessageError, oncePerEvent, type AmqpClient } from "@chat/platform";
import type { AppDeps } from "../deps";
import { doReplicateUsers } from "../actions/users";

const SCHEMAS = {
  "accounts.user.created": AccountsUserCreated,
  "accounts.user.updated": AccountsUserUpdated,
  "accounts.user.deactivated": AccountsUserDeactivated,
} as const;

export const ACCOUNTS_CONSUMER = "messaging.accounts-users";

/** Keeps the users replica current from accounts' domain events (idempotent per envelope id). */
export async function consumeAccountsEvents(amqp: AmqpClient, deps: AppDeps): Promise<void> {
  await amqp.consume({
    name: ACCOUNTS_CONSUMER,
    bindings: Object.keys(SCHEMAS),
    handler: async (envelope) => {
      const schema = SCHEMAS[envelope.type as keyof typeof SCHEMAS];
      if (!schema) return;
      const parsed = schema.safeParse(envelope.payload);
      if (!parsed.success) throw new InvalidMessageError(`${envelope.type}: ${parsed.error.message}`);
      await oncePerEvent(deps.pool, ACCOUNTS_CONSUMER, envelope.id, (tx) => doReplicateUsers(tx, [{ ...parsed.data.user, avatar: parsed.data.avatar }]));
    },
  });
}
