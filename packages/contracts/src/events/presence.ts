import { z } from "zod";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/**
 * Zulip's modern presence format (register with slim_presence, POST /users/me/presence with
 * last_update_id): when a client last reported the user active, and last connected at all
 * (Unix seconds). Keyed by the user id as a string.
 */
export const ModernPresence = z.strictObject({
  active_timestamp: z.number().int(),
  idle_timestamp: z.number().int(),
});
export type ModernPresence = z.infer<typeof ModernPresence>;

/** One client's entry of the legacy format; since feature level 178 always the client "website". */
export const LegacyClientPresence = z.strictObject({
  client: z.string(),
  status: z.enum(["active", "idle"]),
  timestamp: z.number().int(),
  pushable: z.boolean(),
});
export type LegacyClientPresence = z.infer<typeof LegacyClientPresence>;

/** The legacy format of one user (keyed by their API email): `website` and a copy without `pushable`. */
export const LegacyPresence = z.strictObject({
  aggregated: LegacyClientPresence.omit({ pushable: true }),
  website: LegacyClientPresence,
});
export type LegacyPresence = z.infer<typeof LegacyPresence>;

/**
 * Client event `presence`, to everyone in the organization when a user comes back online (or
 * first appears, or turns presence sharing on or off). `email` is published always; the events
 * service removes it for queues registered with slim_presence, as Zulip's Tornado does.
 */
export const PresenceEvent = z.strictObject({
  type: z.literal("presence"),
  user_id: z.number().int(),
  email: z.string().optional(),
  server_timestamp: z.number(),
  presence: z.record(z.string(), LegacyClientPresence),
});
export type PresenceEvent = z.infer<typeof PresenceEvent>;

/** A user's presence changed in a way others should see at once. */
export const AccountsPresenceChanged = defineEvent(
  "accounts.presence.changed",
  z.object({ user_id: z.number().int(), client: noticeOf(PresenceEvent) }),
);
