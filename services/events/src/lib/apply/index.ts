import { accountAppliers } from "./accounts";
import { channelAppliers } from "./channels";
import { messageAppliers } from "./messages";
import { presenceAppliers } from "./presence";
import { fetched, upsert, type Applier, type AppliedEvent, type ApplyContext, type State } from "./types";

/**
 * Applies client events to a register state, as a client would (Zulip's `apply_events`). Used by
 * POST /register for the events that arrived while the state was fetched, and by the tests'
 * "verify action" loop. Appliers are idempotent where a register can see a change twice (it is
 * in the fetched state and in the queue), and answer false when they cannot apply an event
 * faithfully (an unknown type, state not fetched, or a value only a database knows).
 */

export type { ApplyContext, AppliedEvent, State } from "./types";

const noState: Applier = () => true;

const appliers: Record<string, Applier> = {
  heartbeat: noState,
  restart: noState,
  typing: noState,
  attachment: noState,
  invites_changed: noState,
  // Exports are listed by GET /export/realm, not in register's state.
  realm_export: noState,
  // Reactions and widgets' submessages live in messages, which register's state does not hold.
  reaction: noState,
  submessage: noState,
  ...messageAppliers,
  ...channelAppliers,
  ...accountAppliers,
  ...presenceAppliers,

  drafts(state, event, ctx) {
    if (!fetched(ctx, "drafts")) return false;
    if (!Array.isArray(state.drafts)) return true;
    if (event.op === "add") for (const d of event.drafts) upsert(state.drafts, "id", d);
    else if (event.op === "update") upsert(state.drafts, "id", event.draft);
    else if (event.op === "remove") state.drafts = state.drafts.filter((d: any) => d.id !== event.draft_id);
    else return false;
    // Newest edit first, as register lists them.
    state.drafts.sort((a: any, b: any) => b.timestamp - a.timestamp || b.id - a.id);
    return true;
  },

  saved_snippets(state, event, ctx) {
    if (!fetched(ctx, "saved_snippets")) return false;
    if (!Array.isArray(state.saved_snippets)) return true;
    if (event.op === "add") upsert(state.saved_snippets, "id", event.saved_snippet);
    else if (event.op === "remove") state.saved_snippets = state.saved_snippets.filter((s: any) => s.id !== event.saved_snippet_id);
    else return false;
    // Oldest first, as register lists them.
    state.saved_snippets.sort((a: any, b: any) => a.id - b.id);
    return true;
  },

  realm_emoji(state, event, ctx) {
    if (!fetched(ctx, "realm_emoji")) return false;
    // The whole dictionary rides in every event.
    if (state.realm_emoji && typeof state.realm_emoji === "object") state.realm_emoji = event.realm_emoji;
    return true;
  },

  scheduled_messages(state, event, ctx) {
    if (!fetched(ctx, "scheduled_messages")) return false;
    if (!Array.isArray(state.scheduled_messages)) return true;
    const list = state.scheduled_messages as any[];
    if (event.op === "add") for (const m of event.scheduled_messages) upsert(list, "scheduled_message_id", m);
    else if (event.op === "update") upsert(list, "scheduled_message_id", event.scheduled_message);
    else if (event.op === "remove") state.scheduled_messages = list.filter((m) => m.scheduled_message_id !== event.scheduled_message_id);
    else return false;
    state.scheduled_messages.sort(
      (a: any, b: any) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp || a.scheduled_message_id - b.scheduled_message_id,
    );
    return true;
  },
};

/** Applies one event; false when it cannot be applied. The state changes only on success. */
export function applyEvent(state: State, event: AppliedEvent, ctx: ApplyContext): boolean {
  const applier = appliers[event.type];
  if (!applier) return false;
  const { id: _id, ...body } = event;
  const draft = structuredClone(state);
  if (!applier(draft, structuredClone(body) as AppliedEvent, ctx)) return false;
  for (const k of Object.keys(state)) if (!(k in draft)) delete state[k];
  Object.assign(state, draft);
  return true;
}

/** Applies events in order until one cannot be applied; returns the id of the last applied (-1 if none). */
export function applyEvents(state: State, events: Array<AppliedEvent & { id: number }>, ctx: ApplyContext): number {
  let last = -1;
  for (const event of events) {
    if (!applyEvent(state, event, ctx)) break;
    last = event.id;
  }
  return last;
}
