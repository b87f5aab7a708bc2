import { MessagingUserAccessChanged } from "@chat/contracts";
import { InvalidMessageError, type AmqpClient } from "@chat/platform";
import { doNotifyUserAccessChanged } from "../actions/user-access";
import type { AccountsDeps } from "../deps";

/** Guests who gained or lost access to users (messaging's subscriptions) hear of those users from here, which owns them. */
export async function consumeUserAccessChanges(amqp: AmqpClient, deps: AccountsDeps): Promise<void> {
  await amqp.consume({
    name: "accounts.user-access",
    bindings: ["messaging.user_access.changed"],
    handler: async (envelope) => {
      const parsed = MessagingUserAccessChanged.safeParse(envelope.payload);
      if (!parsed.success) throw new InvalidMessageError(parsed.error.message);
      await doNotifyUserAccessChanged(deps, envelope.realm_id, parsed.data);
    },
  });
}
