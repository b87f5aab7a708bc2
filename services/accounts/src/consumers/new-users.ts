import { AccountsUserJoined } from "@chat/contracts";
import { InvalidMessageError, type AmqpClient } from "@chat/platform";
import { doSubscribeJoinedUser } from "../actions/users";
import type { AccountsDeps } from "../deps";

/** Users created without an invitation join the default channels; retried by the helper until messaging answers. */
export async function consumeUserJoined(amqp: AmqpClient, deps: AccountsDeps): Promise<void> {
  await amqp.consume({
    name: "accounts.new-users",
    bindings: ["accounts.user.joined"],
    handler: async (envelope) => {
      const parsed = AccountsUserJoined.safeParse(envelope.payload);
      if (!parsed.success) throw new InvalidMessageError(parsed.error.message);
      await doSubscribeJoinedUser(deps, envelope.realm_id, parsed.data.user_id);
    },
  });
}
