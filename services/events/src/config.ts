import { z } from "zod";
import { baseConfigShape, envBool, loadConfig, SERVICE_PORTS } from "@chat/platform";

const seconds = (def: number) => z.coerce.number().min(0).default(def);
const positiveInt = (def: number) => z.coerce.number().int().positive().default(def);

/** The events service's environment: the base shape plus queue timings and limits. */
export const eventsConfigShape = {
  ...baseConfigShape,
  PORT: z.coerce.number().int().min(0).max(65535).default(SERVICE_PORTS.events),
  /** A blocking poll with nothing to return gets a heartbeat after this many seconds... */
  EVENTS_HEARTBEAT_SECONDS: seconds(45),
  /** ...plus a random share of this many, so many clients' polls do not return in lockstep. */
  EVENTS_HEARTBEAT_JITTER_SECONDS: seconds(10),
  /** Idle lifetime of a queue that nobody polls (Zulip: 600 s); `queue_lifespan_secs` overrides. */
  EVENTS_QUEUE_LIFESPAN_SECONDS: positiveInt(600),
  /** Upper bound of `queue_lifespan_secs` (Zulip: 7 days). */
  EVENTS_QUEUE_MAX_LIFESPAN_SECONDS: positiveInt(7 * 24 * 3600),
  /**
   * Least time between two blocking polls of one queue, in milliseconds (0: none). A client that
   * polls again sooner waits out the rest, and its answer carries whatever arrived meanwhile: a
   * queue that receives a stream of events is answered at most this often, with more events
   * each time. A poll that has waited longer (an idle client's) answers its first event at once.
   */
  EVENTS_POLL_MIN_INTERVAL_MS: z.coerce.number().int().min(0).max(1000).default(50),
  /** Events a queue may hold unacknowledged; past it the queue is dropped (BAD_EVENT_QUEUE_ID). */
  EVENTS_QUEUE_MAX_EVENTS: positiveInt(10_000),
  /** How often each instance looks for expired queues. */
  EVENTS_SWEEP_INTERVAL_SECONDS: z.coerce.number().positive().default(60),
  /** How long a delivered domain event's id is remembered, to skip redeliveries. */
  EVENTS_DEDUPE_TTL_SECONDS: positiveInt(6 * 3600),
  /** Longest wait for one service's register state before POST /register answers 503. */
  EVENTS_STATE_TIMEOUT_MS: positiveInt(10_000),
  /**
   * Accounts' setting of this name (whether limiting a guest's access to users limits the
   * presence they see), read here to bring a register's state up to date the way accounts
   * builds it: set both services to the same value.
   */
  CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE: envBool(true),
};

export type EventsConfig = z.infer<z.ZodObject<typeof eventsConfigShape>>;

export function loadEventsConfig(env: Record<string, string | undefined> = process.env): EventsConfig {
  return loadConfig(eventsConfigShape, env);
}
