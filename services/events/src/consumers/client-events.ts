import type { ConsumerSpec } from "@chat/platform";
import type { Deliverer } from "../actions/fanout";

/**
 * Every domain event, in publish order: one queue with a single active consumer across all
 * events instances, so each queue receives a realm's client events in commit order. The message
 * is acked only after its copies are in Redis; redeliveries are skipped by envelope id.
 */
export function clientEventsConsumer(deliverer: Deliverer): ConsumerSpec {
  return {
    name: "events.client",
    bindings: ["#"],
    singleActiveConsumer: true,
    prefetch: 200,
    handler: async (envelope) => {
      await deliverer.deliverEnvelope(envelope);
    },
  };
}
