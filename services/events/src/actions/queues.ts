import { randomUUID } from "node:crypto";
import type { ClientEvent } from "@chat/contracts";
import { ApiError, badRequest, isGuest, type Identity } from "@chat/platform";
import { parseNarrow } from "../lib/narrow";
import type { QueueDescriptor } from "../lib/queue-filter";
import type { WakeReason } from "../lib/poll-hub";
import type { EventsRuntime } from "../runtime";
import type { FetchResult } from "../store/queues";

/** Extra time past a poll's heartbeat before the sweeper may treat it as gone (crashed instance). */
const WAIT_GRACE_MS = 10_000;

export interface QueueParams {
  event_types: string[] | null | undefined;
  narrow: unknown[];
  all_public_streams: boolean;
  client_capabilities: Record<string, boolean>;
  apply_markdown: boolean;
  client_gravatar: boolean;
  queue_lifespan_secs: number;
  /** Only POST /register takes it; queues made by GET /events get Zulip's default, false. */
  include_subscribers?: boolean;
}

export const badEventQueueId = (queueId: string) =>
  new ApiError("BAD_EVENT_QUEUE_ID", `Bad event queue ID: ${queueId}`, { extra: { queue_id: queueId } });

/** Checks register-style parameters and allocates a queue for the caller. */
export async function doCreateQueue(rt: EventsRuntime, who: Identity, params: QueueParams): Promise<QueueDescriptor> {
  if (params.all_public_streams && isGuest(who)) throw badRequest("User not authorized for this query");
  const narrow = parseNarrow(params.narrow);
  const requested = params.queue_lifespan_secs || rt.config.EVENTS_QUEUE_LIFESPAN_SECONDS;
  const queue: QueueDescriptor = {
    id: randomUUID(),
    userId: who.userId,
    realmId: who.realmId,
    eventTypes: params.event_types ? [...new Set(params.event_types)] : null,
    narrow,
    allPublicStreams: params.all_public_streams,
    capabilities: params.client_capabilities,
    applyMarkdown: params.apply_markdown,
    clientGravatar: params.client_gravatar,
    includeSubscribers: params.include_subscribers ?? false,
    lifespanSecs: Math.min(requested, rt.config.EVENTS_QUEUE_MAX_LIFESPAN_SECONDS),
  };
  // Narrowed queues also see public channel messages they were not addressed (as in Zulip),
  // except guests', who may not read every public channel.
  const realmWide = queue.allPublicStreams || (narrow.length > 0 && !isGuest(who));
  await rt.store.create(queue, realmWide, rt.clock.now().getTime());
  return queue;
}

/** The queue's events as Redis holds them (JSON text each), or the error the fetch amounts to. */
function eventsOrThrow(result: FetchResult, queueId: string, lastEventId: number | undefined): string[] {
  switch (result.kind) {
    case "ok":
      return result.events;
    case "pruned":
      throw badRequest(`An event newer than ${lastEventId} has already been pruned!`);
    case "notin":
      throw badRequest(`Event ${lastEventId} was not in this queue`);
    default:
      throw badEventQueueId(queueId);
  }
}

export interface PollParams extends QueueParams {
  queue_id: string | undefined;
  last_event_id: number | undefined;
  dont_block: boolean;
}

export interface PollResult {
  /** Each event's JSON text: a held poll's answer is put together without parsing them. */
  events: string[];
  queue_id: string;
}

/** The answer's data with the events parsed (fastify's route serializes the envelope). */
export const parsedPollResult = (r: PollResult) => ({ events: r.events.map((e) => JSON.parse(e) as ClientEvent), queue_id: r.queue_id });

/** The whole success body of a poll, without parsing and re-serializing its events. */
export const pollResultJson = (r: PollResult) =>
  `{"result":"success","msg":"","events":[${r.events.join(",")}],"queue_id":${JSON.stringify(r.queue_id)}}`;

/**
 * GET /events: acknowledge, then return what is queued, or wait for the first new event or the
 * heartbeat. Without `queue_id`, `dont_block=true` registers a queue (no initial state).
 */
export async function doGetEvents(rt: EventsRuntime, who: Identity, params: PollParams, signal: AbortSignal): Promise<PollResult> {
  if (params.queue_id === undefined) {
    if (!params.dont_block) throw badRequest("Missing 'queue_id' argument");
    const queue = await doCreateQueue(rt, who, params);
    return { events: [], queue_id: queue.id };
  }
  const queueId = params.queue_id;
  const owner = { userId: who.userId, realmId: who.realmId };
  const token = randomUUID();
  const block = !params.dont_block;
  // Subscribe before the fetch, so a wake-up published right after it cannot be missed.
  const waiter = block ? await rt.hub.watch(rt.store.wakeChannel(queueId), token) : null;
  try {
    // Whole milliseconds: Redis takes only integers for the expiry this extends.
    const holdMs = Math.round(rt.heartbeatMs());
    const now = rt.clock.now().getTime();
    const first = await rt.store.fetch(queueId, owner, params.last_event_id, token, block ? { nowMs: now, waitUntilMs: now + holdMs + WAIT_GRACE_MS } : null);
    const events = eventsOrThrow(first, queueId, params.last_event_id);
    if (events.length > 0 || !waiter) return { events, queue_id: queueId };

    const deadline = Date.now() + holdMs;
    for (;;) {
      const reason: WakeReason = await waiter.next(deadline - Date.now(), signal);
      switch (reason) {
        case "events": {
          const now = eventsOrThrow(await rt.store.read(queueId, owner, token), queueId, undefined);
          if (now.length > 0) return { events: now, queue_id: queueId };
          continue; // its events were taken by a concurrent acknowledgement
        }
        case "release":
          // A newer poll on this queue took over; answer with what is there now.
          return { events: eventsOrThrow(await rt.store.read(queueId, owner, token), queueId, undefined), queue_id: queueId };
        case "deleted":
          return { events: [], queue_id: queueId };
        case "dropped":
          throw badEventQueueId(queueId);
        case "heartbeat":
          return { events: eventsOrThrow(await rt.store.heartbeat(queueId, owner, token), queueId, undefined), queue_id: queueId };
        case "aborted":
          await rt.store.endPoll(queueId, token);
          return { events: [], queue_id: queueId };
      }
    }
  } finally {
    waiter?.close();
  }
}

/** DELETE /events: releases a waiting poll and removes the queue. */
export async function doDeleteQueue(rt: EventsRuntime, who: Identity, queueId: string): Promise<void> {
  const deleted = await rt.store.delete(queueId, { userId: who.userId, realmId: who.realmId });
  if (!deleted) throw badEventQueueId(queueId);
}
