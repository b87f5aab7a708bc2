import { AccountsUserCreated, AccountsUserDeactivated, AccountsUserUpdated } from "@chat/contracts";
import { InvalidMessageError, oncePerEvent, type AmqpClient } from "@chat/platform";
import type { AppDeps } from "../deps";
import { notifyActivityChange, notifyRoleChange } from "../actions/stream-access";
import { doFillUserSettings } from "../actions/user-settings";
import { doReplicateUsers } from "../actions/users";
import { selectUsersByIds } from "../store/users";

const SCHEMAS = {
  "accounts.user.created": AccountsUserCreated,
  "accounts.user.updated": AccountsUserUpdated,
  "accounts.user.deactivated": AccountsUserDeactivated,
} as const;

export const ACCOUNTS_CONSUMER = "messaging.accounts-users";

/**
 * Keeps the users replica current from accounts' domain events (idempotent per envelope id), and
 * tells clients what that changes about channels (see stream-access).
 */
export async function consumeAccountsEvents(amqp: AmqpClient, deps: AppDeps): Promise<void> {
  await amqp.consume({
    name: ACCOUNTS_CONSUMER,
    bindings: Object.keys(SCHEMAS),
    handler: async (envelope) => {
      const schema = SCHEMAS[envelope.type as keyof typeof SCHEMAS];
      if (!schema) return;
      const parsed = schema.safeParse(envelope.payload);
      if (!parsed.success) throw new InvalidMessageError(`${envelope.type}: ${parsed.error.message}`);
      const user = parsed.data.user;
      await oncePerEvent(deps.pool, ACCOUNTS_CONSUMER, envelope.id, async (tx) => {
        const [before] = await selectUsersByIds(tx, user.realm_id, [user.user_id]);
        await doReplicateUsers(tx, [{ ...user, avatar: parsed.data.avatar }]);
        // A new user's settings start as the organization's defaults, announced only here.
        const settings = envelope.type === "accounts.user.created" ? AccountsUserCreated.parse(envelope.payload).settings : undefined;
        if (settings) await doFillUserSettings(tx, user.realm_id, [{ user_id: user.user_id, settings }]);
        // The replica had the user as they were: a new role can show or hide channels, and
        // subscriber lists count active users only.
        if (before && before.role !== user.role && user.is_active) await notifyRoleChange(tx, deps, user.realm_id, user.user_id, before.role, user.role);
        if (before && before.isActive !== user.is_active) await notifyActivityChange(tx, deps, user.realm_id, user.user_id, user.is_active);
      });
    },
  });
}
