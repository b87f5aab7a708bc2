import { MessagingRealmEmojiUpdated } from "@chat/contracts";
import { InvalidMessageError, type AmqpClient } from "@chat/platform";
import { doMergeRealmEmoji } from "../actions/realm-emoji";
import type { AccountsDeps } from "../deps";

/** Messaging's custom emoji, replicated for status emoji checks. Merging is idempotent and order-free. */
export async function consumeRealmEmoji(amqp: AmqpClient, deps: AccountsDeps): Promise<void> {
  await amqp.consume({
    name: "accounts.realm-emoji",
    bindings: ["messaging.realm_emoji.updated"],
    handler: async (envelope) => {
      const parsed = MessagingRealmEmojiUpdated.safeParse(envelope.payload);
      if (!parsed.success) throw new InvalidMessageError(parsed.error.message);
      await doMergeRealmEmoji(deps, envelope.realm_id, parsed.data.realm_emoji);
    },
  });
}
