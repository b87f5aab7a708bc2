import type { ApiClient, DemoUser } from "@chat/testkit";
import { ok, register as registerQueue, until, verifyAction as verify, VOLATILE_STATE, type EventQueue } from "@chat/testkit/e2e";
import { applyEvent, type ApplyContext } from "../src/lib/apply/index";

/**
 * Zulip's verify_action for the verify-actions-*.e2e files: register with a modern client's
 * capabilities, act, apply the delivered events with the events service's applier (the one
 * register uses for events that race its state), compare with a fresh register.
 */

export const CAPABILITIES = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  user_avatar_url_field_optional: false,
  stream_typing_notifications: true,
  user_settings_object: true,
  linkifier_url_template: true,
};

/** Two registers differ in these with nothing changed (presence's update id: a presence event does not move it). */
const VOLATILE = [...VOLATILE_STATE, "presence_last_update_id"];

/**
 * The form Zulip's schema (feature level 330) is asked about: without what our level 267 still
 * sends and Zulip dropped later (update_message's prev_rendered_content_version, a reaction's `user`).
 */
function zulipForm(e: Record<string, any>): Record<string, any> {
  if (e.type === "update_message") return (({ prev_rendered_content_version: _v, ...rest }) => rest)(e);
  if (e.type === "reaction") return (({ user: _legacy, ...rest }) => rest)(e);
  return e;
}

export function verifierFor(as: (u: DemoUser) => ApiClient) {
  const queueOf = async (u: DemoUser, params: Record<string, unknown> = {}): Promise<EventQueue> => ({
    ...(await registerQueue(as(u), { client_capabilities: CAPABILITIES, ...params })),
    zulipForm,
  });

  /**
   * Register (all state, channels' subscribers too unless `params` say otherwise), act, apply,
   * compare; the events. `settle`: what must hold of the events first (work that follows the action).
   */
  function verifyAction(
    u: DemoUser,
    action: () => Promise<unknown>,
    params: Record<string, unknown> = { include_subscribers: true },
    settle?: (events: any[]) => boolean,
  ): Promise<any[]> {
    const ctx: ApplyContext = {
      userId: u.user_id,
      fetchTypes: (params.fetch_event_types ?? params.event_types ?? null) as string[] | null,
      includeSubscribers: Boolean(params.include_subscribers),
      clientGravatar: params.client_gravatar !== false,
      slimPresence: params.slim_presence === true,
      userListIncomplete: (params.client_capabilities as Record<string, unknown> | undefined)?.user_list_incomplete === true,
      // The events service's own CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE decides; the stack leaves it at its default, true.
      accessLimitsPresence: true,
    };
    // Events that cross two services (accounts, then messaging's subscribers) take seconds when the
    // whole suite shares the machine.
    return verify(action, { register: () => queueOf(u, params), apply: (state, e) => applyEvent(state, e, ctx), settle, volatile: VOLATILE, timeoutMs: 20_000, pollMs: 200 });
  }

  /**
   * A message sent before an action under test: waits until its event reached a queue of
   * `viewer`, so the register that follows neither gets it as an event nor misses it in its state.
   */
  async function sendBefore(viewer: DemoUser, sender: DemoUser, params: Record<string, unknown>): Promise<number> {
    const probe = await queueOf(viewer, { event_types: ["message"] });
    const id = ok(await as(sender).post("/messages", params)).id as number;
    await until("the message's event", async () => {
      const { events } = ok(await as(viewer).get("/events", { queue_id: probe.queue_id, last_event_id: probe.last_event_id, dont_block: true }));
      return events.some((e: any) => e.message?.id === id);
    });
    await as(viewer).delete("/events", { queue_id: probe.queue_id });
    return id;
  }

  /** A channel `creator` makes with these subscribers, its creation's events over (as `viewer` sees them); its id. */
  async function makeChannel(viewer: DemoUser, creator: DemoUser, name: string, subscribers: DemoUser[], extra: Record<string, unknown> = {}): Promise<number> {
    await verifyAction(viewer, async () =>
      ok(await as(creator).post("/users/me/subscriptions", { subscriptions: [{ name }], principals: subscribers.map((s) => s.user_id), ...extra })),
    );
    return ok(await as(creator).get("/get_stream_id", { stream: name })).stream_id;
  }

  return { queueOf, verifyAction, sendBefore, makeChannel };
}
