import { randomUUID } from "node:crypto";
import type { ClientEvent } from "@chat/contracts";
import { ApiError, badRequest, flatUuid, isGuest, type Identity } from "@chat/platform";
import { parseNarrow } from "../lib/narrow";
import type { QueueDescriptor } from "../lib/queue-filter";
import type { WakeReason, WakeTarget, Waiter } from "../lib/poll-hub";
import type { EventsRuntime } from "../runtime";
import type { FetchResult, QueueOwner } from "../store/queues";

/** Extra time past a poll's heartbeat before the sweeper may treat it as gone (crashed instance). */
const WAIT_GRACE_MS = 10_000;

export interface QueueParams {
  event_types: string[] | null | undefined;
  narrow: unknown[];
  all_public_streams: boolean;
  client_capabilities: Record<string, boolean>;
  apply_markdown: boolean;
  client_gravatar: boolean;
  slim_presence: boolean;
  queue_lifespan_secs: number;
  /** Whether channel objects in events keep their `subscribers`; false unless asked for (Zulip's default). */
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
    slimPresence: params.slim_presence,
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
    case "pace":
      // Only a blocking poll's first fetch is paced, and it waits instead of reading this.
      throw new Error("a paced fetch reached eventsOrThrow");
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

/** GET /events without `queue_id`: with `dont_block=true` it registers a queue (no initial state). */
export async function doRegisterByPoll(rt: EventsRuntime, who: Identity, params: PollParams): Promise<PollResult> {
  if (!params.dont_block) throw badRequest("Missing 'queue_id' argument");
  const queue = await doCreateQueue(rt, who, params);
  return { events: [], queue_id: queue.id };
}

/** How a poll ends: with its result, or with what it failed with (an ApiError for the client). */
export type PollDone = (err: unknown, result?: PollResult) => void;

/**
 * GET /events on a queue: acknowledge, then answer with what is queued, or wait for the first
 * new event or the heartbeat, then call `done` once. `leave()` on the returned poll ends the
 * wait when the client hangs up.
 */
export function pollQueue(rt: EventsRuntime, owner: QueueOwner, queueId: string, lastEventId: number | undefined, block: boolean, done: PollDone): QueuePoll {
  const poll = new QueuePoll(rt, owner, queueId, done);
  void poll.start(lastEventId, block);
  return poll;
}

/**
 * One poll from its first fetch to its answer. While it waits it is this object, its waiter and
 * a timer, and no suspended async function: an events instance holds thousands of them.
 */
export class QueuePoll implements WakeTarget {
  private waiter: Waiter | null = null;
  private deadline = 0;
  private left = false;
  private ended = false;
  /** Waiting out the queue's poll interval before the first fetch (see FETCH in scripts.ts). */
  private paused: NodeJS.Timeout | null = null;

  constructor(
    private readonly rt: EventsRuntime,
    private readonly owner: QueueOwner,
    private readonly queueId: string,
    private readonly done: PollDone,
  ) {}

  async start(lastEventId: number | undefined, block: boolean): Promise<void> {
    const { rt, queueId } = this;
    try {
      const token = flatUuid();
      // Subscribe before the fetch, so a wake-up published right after it cannot be missed.
      if (block) this.waiter = await rt.hub.watch(rt.store.wakeChannel(queueId), token);
      await this.fetchFirst(lastEventId, token, block);
    } catch (err) {
      this.finish(err);
    }
  }

  private async fetchFirst(lastEventId: number | undefined, token: string, block: boolean): Promise<void> {
    const { rt, queueId } = this;
    // This process fetched the queue moments ago: Redis would only say to wait.
    const early = block ? rt.paces.waitMs(queueId) : 0;
    if (early > 0) return this.pause(early, lastEventId, token, block);
    // Whole milliseconds: Redis takes only integers for the expiry this extends.
    const holdMs = Math.round(rt.heartbeatMs());
    const now = rt.clock.now().getTime();
    const first = await rt.store.fetch(queueId, this.owner, lastEventId, token, block ? { nowMs: now, waitUntilMs: now + holdMs + WAIT_GRACE_MS } : null);
    if (first.kind === "pace") return this.pause(first.waitMs, lastEventId, token, block);
    if (block && first.kind === "ok") rt.paces.fetched(queueId);
    const events = eventsOrThrow(first, queueId, lastEventId);
    if (events.length > 0 || !this.waiter) return this.finish(null, events);
    this.deadline = Date.now() + holdMs;
    if (this.left) this.waiter.wake("aborted");
    this.waiter.listen(holdMs, this);
  }

  /**
   * Too soon after this queue's previous poll: nothing was acknowledged or changed; the same
   * fetch runs once the interval has passed (or the client hangs up first).
   */
  private pause(waitMs: number, lastEventId: number | undefined, token: string, block: boolean): void {
    if (this.left) return this.finish(null, []);
    this.paused = setTimeout(() => {
      this.paused = null;
      this.fetchFirst(lastEventId, token, block).catch((err) => this.finish(err));
    }, waitMs);
  }

  /** The client hung up: stop waiting, without taking a heartbeat from the queue. */
  leave(): void {
    this.left = true;
    if (this.paused) {
      clearTimeout(this.paused);
      this.paused = null;
      return this.finish(null, []);
    }
    this.waiter?.wake("aborted");
  }

  onWake(reason: WakeReason): void {
    if (reason === "events") {
      // Events carried by the wake-ups are what the queue holds past the acknowledged ones, and
      // the fan-out that pushed them already ended this wait in Redis: answer without a read.
      const carried = this.waiter!.takeCarried();
      if (carried) return this.finish(null, carried);
    }
    void this.wakeUp(reason);
  }

  private async wakeUp(reason: WakeReason): Promise<void> {
    const { rt, queueId, owner } = this;
    const token = this.waiter!.token;
    try {
      switch (reason) {
        case "events": {
          const events = eventsOrThrow(await rt.store.read(queueId, owner, token), queueId, undefined);
          if (events.length > 0) return this.finish(null, events);
          // Its events were taken by a concurrent acknowledgement: wait on.
          this.waiter!.listen(this.deadline - Date.now(), this);
          return;
        }
        case "release":
          // A newer poll on this queue took over; answer with what is there now.
          return this.finish(null, eventsOrThrow(await rt.store.read(queueId, owner, token), queueId, undefined));
        case "deleted":
          return this.finish(null, []);
        case "dropped":
          throw badEventQueueId(queueId);
        case "heartbeat":
          return this.finish(null, eventsOrThrow(await rt.store.heartbeat(queueId, owner, token), queueId, undefined));
        case "aborted":
          await rt.store.endPoll(queueId, token);
          return this.finish(null, []);
      }
    } catch (err) {
      this.finish(err);
    }
  }

  private finish(err: unknown, events?: string[]): void {
    if (this.ended) return;
    this.ended = true;
    this.waiter?.close();
    if (err) this.done(err);
    else this.done(null, { events: events!, queue_id: this.queueId });
  }
}

/** DELETE /events: releases a waiting poll and removes the queue. */
export async function doDeleteQueue(rt: EventsRuntime, who: Identity, queueId: string): Promise<void> {
  const deleted = await rt.store.delete(queueId, { userId: who.userId, realmId: who.realmId });
  if (!deleted) throw badEventQueueId(queueId);
}
