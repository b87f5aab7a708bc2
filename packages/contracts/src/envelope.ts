import { z } from "zod";

/** The domain-event envelope published on the `chat.domain` topic exchange. `type` is the routing key. */
export const DomainEnvelope = z.object({
  id: z.string().uuid(),
  type: z.string().regex(/^[a-z_]+\.[a-z_]+\.[a-z_]+$/),
  version: z.number().int().positive(),
  occurred_at: z.string(),
  realm_id: z.number().int(),
  payload: z.record(z.string(), z.unknown()),
});
export type DomainEnvelope = z.infer<typeof DomainEnvelope>;

/**
 * A recipient of a client event. Per-user data (a message's flags) rides with the user id,
 * as Zulip's `send_event(realm, event, users)` does.
 */
export const ClientAudienceEntry = z.union([
  z.number().int(),
  z.object({ id: z.number().int(), flags: z.array(z.string()) }),
]);
export type ClientAudienceEntry = z.infer<typeof ClientAudienceEntry>;

/**
 * Any domain event whose payload carries `client` is delivered by the events service to the
 * queues of `users`: the producer decides who receives what; the events service only delivers.
 */
export const ClientNotice = z.object({
  event: z.record(z.string(), z.unknown()).and(z.object({ type: z.string() })),
  users: z.array(ClientAudienceEntry),
  /** For message events: also deliver to queues of this realm that asked for all public channels. */
  public_stream_id: z.number().int().optional(),
  /** Local echo: the sending client's queue gets `local_message_id` / `local_id`. */
  sender_queue: z.object({ queue_id: z.string(), local_id: z.string() }).optional(),
  /** Only queues registered with this client capability set to true get the event. */
  capability: z.string().optional(),
  /** Only queues registered without this client capability (or with it false) get the event. */
  without_capability: z.string().optional(),
});
export type ClientNotice = z.infer<typeof ClientNotice>;

export const EXCHANGE = "chat.domain";
