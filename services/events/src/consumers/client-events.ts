import type { ConsumerSpec, Logger } from "@chat/platform";
import { doDropDeactivatedQueues } from "../actions/deactivation";
import type { Deliverer } from "../actions/fanout";
import type { QueueStore } from "../store/queues";

export interface ClientEventsDeps {
  deliverer: Deliverer;
  store: QueueStore;
  log: Logger;
}

/**
 * Every domain event, in publish order: one queue with a single active consumer across all
 * events instances, so each queue receives a realm's client events in commit order. The message
 * is acked only after its copies are in Redis; redeliveries are skipped by envelope id.
 * Deactivations drop queues here too, after the envelope's own notice, so they keep that order.
 */
export function clientEventsConsumer(deps: ClientEventsDeps): ConsumerSpec {
  return {
    name: "events.client",
    bindings: ["#"],
    singleActiveConsumer: true,
    prefetch: 200,
    handler: async (envelope) => {
      await deps.deliverer.deliverEnvelope(envelope);
      await doDropDeactivatedQueues(deps.store, deps.log, envelope);
    },
  };
}
