import { ApiError, serviceUnavailable, SUCCESS_PREFIX, type Identity, type InternalClient } from "@chat/platform";
import type { StateService } from "../runtime";

/**
 * Which service owns the initial state of which event type (interface point 2). A type nobody
 * is known to own is asked of every service, so a type added later by its owner still works.
 */
export const STATE_OWNERS: Record<StateService, readonly string[]> = {
  accounts: [
    "realm", "realm_user", "realm_user_groups", "user_group", "user_status", "realm_linkifiers", "realm_filters",
    "realm_user_settings_defaults", "user_settings", "update_display_settings", "update_global_notifications",
    "alert_words", "custom_profile_fields", "realm_domains", "realm_bot", "realm_embedded_bots",
    "realm_incoming_webhook_bots", "realm_playgrounds", "muted_users", "presence", "onboarding_steps",
    "video_calls", "giphy", "invites_changed",
  ],
  messaging: [
    "subscription", "stream", "message", "update_message_flags", "drafts", "user_topic", "muted_topics",
    "starred_messages", "recent_private_conversations", "default_streams", "default_stream_groups",
    "stop_words", "attachment", "saved_snippets", "realm_emoji",
  ],
  scheduler: ["scheduled_messages"],
};

/** Types that carry no state (the queue's own events): never a reason to ask anyone. */
const STATELESS = new Set(["heartbeat", "restart", "typing", "update_message", "delete_message", "reaction", "submessage", "realm_export"]);

export function servicesFor(fetchTypes: readonly string[] | null): StateService[] {
  const all = Object.keys(STATE_OWNERS) as StateService[];
  if (fetchTypes === null) return all;
  const wanted = new Set<StateService>();
  for (const type of fetchTypes) {
    if (STATELESS.has(type)) continue;
    const owners = all.filter((s) => STATE_OWNERS[s].includes(type));
    for (const s of owners.length ? owners : all) wanted.add(s);
  }
  return all.filter((s) => wanted.has(s));
}

export interface StateParams {
  fetch_event_types: string[] | null;
  client_capabilities: Record<string, boolean>;
  include_subscribers: boolean;
  client_gravatar: boolean;
  apply_markdown: boolean;
  narrow: unknown[];
  slim_presence: boolean;
  presence_history_limit_days?: number;
}

/**
 * Asks every owning service for its slice of the initial state, in parallel. Each slice comes
 * back as its members' JSON text (see stateMembers): a register's state is half a megabyte in a
 * large organization, and it usually reaches the client unchanged. Partial state would make a
 * client silently wrong, so any failure fails the whole register: an unreachable or broken
 * service becomes 503; a service's own 4xx answer is passed on.
 */
export async function fetchRegisterState(
  clients: Record<StateService, InternalClient>,
  who: Identity,
  params: StateParams,
  opts: { requestId?: string; timeoutMs: number },
): Promise<string[]> {
  const services = servicesFor(params.fetch_event_types);
  return Promise.all(
    services.map(async (service) => {
      try {
        const text = await clients[service].callText("POST", `/internal/register_state/${service}`, {
          identity: who,
          params: { ...params },
          requestId: opts.requestId,
          timeoutMs: opts.timeoutMs,
          // Reads only: sent again when a replica of the service dies under it.
          readOnly: true,
        });
        return stateMembers(text);
      } catch (err) {
        if (err instanceof ApiError && err.status < 500 && err.status !== 404) throw err;
        throw serviceUnavailable(`The ${service} service could not provide its state; try again shortly`);
      }
    }),
  );
}

const IGNORED_TAIL = /^,"ignored_parameters_unsupported":\[[^\]]*\]\}$/;

/**
 * A state service's success body without its envelope: the members' JSON text, without the
 * braces ("" when there are none). Our services serialize the envelope's `result` and `msg`
 * first and `ignored_parameters_unsupported` last; any other form is parsed instead.
 */
export function stateMembers(text: string): string {
  if (!text.startsWith(SUCCESS_PREFIX)) {
    const { result: _r, msg: _m, ignored_parameters_unsupported: _i, ...state } = JSON.parse(text) as Record<string, unknown>;
    return JSON.stringify(state).slice(1, -1);
  }
  let end = text.length - 1;
  const ignored = text.lastIndexOf(',"ignored_parameters_unsupported":[');
  if (ignored > 0 && IGNORED_TAIL.test(text.slice(ignored))) end = ignored;
  const members = text.slice(SUCCESS_PREFIX.length, end);
  return members.startsWith(",") ? members.slice(1) : members;
}

/** The slices merged into one state object (later slices win, as in the JSON they make). */
export function parseState(slices: string[]): Record<string, unknown> {
  return Object.assign({}, ...slices.map((members) => JSON.parse(`{${members}}`) as Record<string, unknown>));
}
