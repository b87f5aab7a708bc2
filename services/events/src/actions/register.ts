import {
  EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS,
  MAX_MESSAGE_LENGTH,
  MAX_TOPIC_LENGTH,
  ZULIP_FEATURE_LEVEL,
  ZULIP_MERGE_BASE,
  ZULIP_VERSION,
} from "@chat/contracts";
import type { Identity } from "@chat/platform";
import { fetchRegisterState, parseState } from "../clients/state";
import { applyEvents } from "../lib/apply/index";
import type { EventsRuntime } from "../runtime";
import { doCreateQueue, type QueueParams } from "./queues";

export interface RegisterParams extends QueueParams {
  fetch_event_types: string[] | null | undefined;
  include_subscribers: boolean;
  presence_history_limit_days?: number;
}

/**
 * POST /register, following Zulip's race rule:
 * 1. the queue is created first, so every change committed from now on reaches it;
 * 2. the owning services are asked for their state (changes committed before step 1 are in it;
 *    changes committed in between may be in it and in the queue);
 * 3. the events already queued are applied to that state, in order, with idempotent appliers
 *    (a change seen twice lands once), and dropped from the queue; `last_event_id` is the last
 *    one applied. Application stops at the first event this service cannot apply (a type it
 *    does not know, or whose state was not fetched): that event and later ones stay queued and
 *    reach the client through GET /events. So no event is lost, and none is applied twice.
 */
/** What the register answer adds to the services' state. */
interface RegisterTail {
  queue_id: string;
  last_event_id: number;
  zulip_version: string;
  zulip_feature_level: number;
  zulip_merge_base: string;
  max_message_length: number;
  max_topic_length: number;
  event_queue_longpoll_timeout_seconds: number;
}

/** The register's whole success body (JSON text). */
export async function doRegister(rt: EventsRuntime, who: Identity, params: RegisterParams, requestId?: string): Promise<string> {
  const queue = await doCreateQueue(rt, who, params);
  // A null fetch_event_types is the same as none given (Zulip: `if fetch_event_types is not None`).
  const fetchTypes = params.fetch_event_types ?? params.event_types ?? null;
  let slices: string[];
  try {
    slices = await fetchRegisterState(
      rt.stateClients,
      who,
      {
        fetch_event_types: fetchTypes,
        client_capabilities: params.client_capabilities,
        include_subscribers: params.include_subscribers,
        client_gravatar: params.client_gravatar,
        apply_markdown: params.apply_markdown,
        narrow: params.narrow,
        slim_presence: params.slim_presence,
        presence_history_limit_days: params.presence_history_limit_days,
      },
      { requestId, timeoutMs: rt.config.EVENTS_STATE_TIMEOUT_MS },
    );
  } catch (err) {
    await rt.store.delete(queue.id, who).catch(() => {});
    throw err;
  }

  const tail = (lastEventId: number): RegisterTail => ({
    queue_id: queue.id,
    last_event_id: lastEventId,
    zulip_version: ZULIP_VERSION,
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_merge_base: ZULIP_MERGE_BASE,
    max_message_length: MAX_MESSAGE_LENGTH,
    max_topic_length: MAX_TOPIC_LENGTH,
    event_queue_longpoll_timeout_seconds: EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS,
  });
  const queued = await rt.store.read(queue.id, who, "register");
  if (queued.kind === "ok" && queued.events.length > 0) {
    const state = parseState(slices);
    const events = queued.events.map((e) => JSON.parse(e) as Record<string, unknown> & { id: number; type: string });
    const lastEventId = applyEvents(state, events, {
      userId: who.userId,
      fetchTypes,
      includeSubscribers: params.include_subscribers,
      clientGravatar: params.client_gravatar,
      slimPresence: params.slim_presence,
      userListIncomplete: params.client_capabilities?.user_list_incomplete === true,
      accessLimitsPresence: rt.config.CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE,
    });
    if (lastEventId >= 0) await rt.store.pruneTo(queue.id, lastEventId);
    return JSON.stringify({ result: "success", msg: "", ...state, ...tail(lastEventId) });
  }
  // Nothing to apply (the usual case): the services' JSON goes out as they wrote it.
  const members = [...slices.filter((m) => m !== ""), JSON.stringify(tail(-1)).slice(1, -1)];
  return `{"result":"success","msg":"",${members.join(",")}}`;
}
