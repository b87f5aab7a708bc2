/**
 * Applies client events to a register state, as a client would (Zulip's `apply_events`). Used by
 * POST /register for the events that arrived while the state was fetched, and by the tests'
 * "verify action" loop. Every applier is idempotent: an event whose change the fetched state
 * already contains leaves it unchanged.
 */

export type State = Record<string, any>;
export type AppliedEvent = Record<string, any> & { id: number; type: string };

export interface ApplyContext {
  userId: number;
  /** The event types whose state was fetched; null = all. */
  fetchTypes: readonly string[] | null;
}

type Applier = (state: State, event: AppliedEvent, ctx: ApplyContext) => boolean;

const fetched = (ctx: ApplyContext, type: string) => ctx.fetchTypes === null || ctx.fetchTypes.includes(type);

/** Replaces (or appends) the item whose `key` matches. */
function upsert<T extends Record<string, any>>(list: T[], key: keyof T, item: T): void {
  const i = list.findIndex((x) => x[key] === item[key]);
  if (i >= 0) list[i] = item;
  else list.push(item);
}

const removeWhere = <T>(list: T[], pred: (x: T) => boolean): T[] => list.filter((x) => !pred(x));

const appliers: Record<string, Applier> = {
  heartbeat: () => true,
  restart: () => true,

  message(state, event, ctx) {
    if (!fetched(ctx, "message")) return false;
    const id = event.message?.id as number;
    if (typeof state.max_message_id === "number") state.max_message_id = Math.max(state.max_message_id, id);
    return true;
  },

  drafts(state, event, ctx) {
    if (!fetched(ctx, "drafts")) return false;
    if (!Array.isArray(state.drafts)) return true;
    if (event.op === "add") for (const d of event.drafts) upsert(state.drafts, "id", d);
    else if (event.op === "update") upsert(state.drafts, "id", event.draft);
    else if (event.op === "remove") state.drafts = removeWhere(state.drafts, (d: any) => d.id === event.draft_id);
    else return false;
    return true;
  },

  scheduled_messages(state, event, ctx) {
    if (!fetched(ctx, "scheduled_messages")) return false;
    if (!Array.isArray(state.scheduled_messages)) return true;
    const list = state.scheduled_messages as any[];
    if (event.op === "add") for (const m of event.scheduled_messages) upsert(list, "scheduled_message_id", m);
    else if (event.op === "update") upsert(list, "scheduled_message_id", event.scheduled_message);
    else if (event.op === "remove") {
      state.scheduled_messages = removeWhere(list, (m: any) => m.scheduled_message_id === event.scheduled_message_id);
    } else return false;
    (state.scheduled_messages as any[]).sort((a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp || a.scheduled_message_id - b.scheduled_message_id);
    return true;
  },
};

/** Applies one event; false when it cannot be applied (unknown type, or its state not fetched). */
export function applyEvent(state: State, event: AppliedEvent, ctx: ApplyContext): boolean {
  const applier = appliers[event.type];
  if (!applier) return false;
  const { id: _id, ...body } = event;
  return applier(state, body as AppliedEvent, ctx);
}

/** Applies events in order until one cannot be applied; returns the id of the last applied (-1 if none). */
export function applyEvents(state: State, events: AppliedEvent[], ctx: ApplyContext): number {
  let last = -1;
  for (const event of events) {
    if (!applyEvent(state, event, ctx)) break;
    last = event.id;
  }
  return last;
}
