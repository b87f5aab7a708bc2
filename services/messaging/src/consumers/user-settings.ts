import { AccountsUserSettingsUpdated } from "@chat/contracts";
import { oncePerEvent, type AmqpClient } from "@chat/platform";
import { doReplicateUserSetting } from "../actions/user-settings";
import type { AppDeps } from "../deps";

export const USER_SETTINGS_CONSUMER = "messaging.user-settings";

/** Keeps the replica of the settings messaging honours current (idempotent per envelope id, in order). */
export async function consumeUserSettings(amqp: AmqpClient, deps: AppDeps): Promise<void> {
  await amqp.consume({
    name: USER_SETTINGS_CONSUMER,
    bindings: ["accounts.user_settings.updated"],
    handler: async (envelope) => {
      // A payload that breaks the contract throws a ZodError: dead-lettered, never retried.
      const p = AccountsUserSettingsUpdated.parse(envelope.payload);
      await oncePerEvent(deps.pool, USER_SETTINGS_CONSUMER, envelope.id, (tx) =>
        doReplicateUserSetting(tx, envelope.realm_id, p.user_id, p.property, p.value),
      );
    },
  });
}
