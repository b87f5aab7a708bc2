import { z } from "zod";
import { LegacyPresence, ModernPresence } from "../events/presence";
import { p } from "../params";
import { route, success } from "../route";

/**
 * Reports the caller's presence and, unless `ping_only`, answers everyone's: in the modern
 * format (keyed by user id) with `last_update_id` or `slim_presence`, else in the legacy one
 * (keyed by API email). A ping-only request answers nothing else.
 */
export const UpdatePresence = route({
  method: "POST",
  path: "/users/me/presence",
  service: "accounts",
  auth: "user",
  params: {
    status: p.str().required(),
    ping_only: p.bool().default(false),
    new_user_input: p.bool().default(false),
    slim_presence: p.bool().default(false),
    /** The incremental protocol: only presence changed after this id (-1: all). */
    last_update_id: p.int(),
    /** How far back the first fetch goes (Zulip's default 14 days); ignored once last_update_id > 0. */
    history_limit_days: p.int(),
  },
  response: success({
    presences: z.union([z.record(z.string(), ModernPresence), z.record(z.string(), LegacyPresence)]).optional(),
    presence_last_update_id: z.number().int().optional(),
    server_timestamp: z.number().optional(),
  }),
});

/** Everyone's presence of the last 14 days, in the legacy format (Zulip's get_statuses_for_realm). */
export const GetRealmPresence = route({
  method: "GET",
  path: "/realm/presence",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({ presences: z.record(z.string(), LegacyPresence), server_timestamp: z.number() }),
});

/** One user's entry: `aggregated` says "offline" once the timestamp is past the offline threshold. */
const UserPresenceEntry = z.strictObject({ status: z.enum(["active", "idle", "offline"]), timestamp: z.number().int() });

export const GetUserPresence = route({
  method: "GET",
  path: "/users/{user_id_or_email}/presence",
  service: "accounts",
  auth: "user",
  params: { user_id_or_email: p.str().path() },
  response: success({ presence: z.strictObject({ website: UserPresenceEntry, aggregated: UserPresenceEntry }) }),
});
