import type { ConsumerSpec, Logger } from "@chat/platform";
import { DEACTIVATION_TYPES, doDropDeactivatedQueues } from "../actions/deactivation";
import type { Deliverer } from "../actions/fanout";
import type { QueueStore } from "../store/queues";

export interface ClientEventsDeps {
  deliverer: Deliverer;
  store: QueueStore;
  log: Logger;
}

const DROPS = new Set<string>(DEACTIVATION_TYPES);

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
    // Envelopes that arrived together (a relay publishes several at a time) are delivered
    // together; a deactivation ends a run, and its queues go before the next envelope's notice.
    batchHandler: async (envelopes) => {
      let from = 0;
      for (let i = 0; i < envelopes.length; i++) {
        if (!DROPS.has(envelopes[i].type)) continue;
        await deps.deliverer.deliverEnvelopes(envelopes.slice(from, i + 1));
        await doDropDeactivatedQueues(deps.store, deps.log, envelopes[i]);
        from = i + 1;
      }
      if (from < envelopes.length) await deps.deliverer.deliverEnvelopes(envelopes.slice(from));
    },
  };
}
