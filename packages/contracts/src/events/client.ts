import { z } from "zod";

/**
 * Client events as GET /events delivers them. Each resource defines its own event schemas in its
 * own file (without `id`, which the events service assigns per queue); the ones here belong to
 * the queue itself.
 */

/** Every delivered event: a per-queue `id` (strictly increasing) and a `type` clients dispatch on. */
export const ClientEvent = z.looseObject({
  id: z.number().int(),
  type: z.string(),
});
export type ClientEvent = z.infer<typeof ClientEvent>;

/** Pushed into a queue when a blocking poll waited for the heartbeat interval with nothing new. */
export const HeartbeatEvent = z.strictObject({
  id: z.number().int(),
  type: z.literal("heartbeat"),
});
export type HeartbeatEvent = z.infer<typeof HeartbeatEvent>;

/** Pushed into every queue after the server was upgraded; clients may re-register. */
export const RestartEvent = z.strictObject({
  id: z.number().int(),
  type: z.literal("restart"),
  zulip_version: z.string(),
  zulip_merge_base: z.string(),
  zulip_feature_level: z.number().int(),
  server_generation: z.number().int(),
  immediate: z.boolean().optional(),
});
export type RestartEvent = z.infer<typeof RestartEvent>;
