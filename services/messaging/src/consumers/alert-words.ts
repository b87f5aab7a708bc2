import { AccountsAlertWordsChanged } from "@chat/contracts";
import { oncePerEvent, type AmqpClient } from "@chat/platform";
import { doReplicateAlertWords } from "../actions/alert-words";
import type { AppDeps } from "../deps";

export const ALERT_WORDS_CONSUMER = "messaging.alert-words";

/** Keeps the alert words replica current (idempotent per envelope id; older versions never win). */
export async function consumeAlertWords(amqp: AmqpClient, deps: AppDeps): Promise<void> {
  await amqp.consume({
    name: ALERT_WORDS_CONSUMER,
    bindings: ["accounts.alert_words.changed"],
    handler: async (envelope) => {
      // A payload that breaks the contract throws a ZodError: dead-lettered, never retried.
      const p = AccountsAlertWordsChanged.parse(envelope.payload);
      await oncePerEvent(deps.pool, ALERT_WORDS_CONSUMER, envelope.id, (tx) =>
        doReplicateAlertWords(tx, envelope.realm_id, p.user_id, p.alert_words, p.version),
      );
    },
  });
}
