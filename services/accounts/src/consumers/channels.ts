import { MessagingStreamDeleted } from "@chat/contracts";
import { InvalidMessageError, type AmqpClient } from "@chat/platform";
import { doForgetDeletedChannel } from "../actions/realm-settings";
import type { AccountsDeps } from "../deps";

/** Channel deletions (messaging's): organization settings naming the channel forget it. Idempotent. */
export async function consumeChannelDeletions(amqp: AmqpClient, deps: AccountsDeps): Promise<void> {
  await amqp.consume({
    name: "accounts.channel-deletions",
    bindings: ["messaging.stream.deleted"],
    handler: async (envelope) => {
      const parsed = MessagingStreamDeleted.safeParse(envelope.payload);
      if (!parsed.success) throw new InvalidMessageError(parsed.error.message);
      await doForgetDeletedChannel(deps, envelope.realm_id, parsed.data.stream_id);
    },
  });
}
