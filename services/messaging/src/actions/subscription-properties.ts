import { MessagingSubscriptionUpdated, SUBSCRIPTION_PROPERTIES } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { accessStreamById, viewerOf } from "../queries/streams";
import { updateSubscriptionProperty } from "../store/subscriptions";

export interface PropertyChange {
  stream_id: number;
  property: string;
  value: string | boolean | number;
}

/** Zulip's check_color: `#` and 3 to 6 hex digits, so the short form `#f00` is a color too. */
export const HEX_COLOR = /^#[0-9a-fA-F]{3,6}$/;

/** POST /users/me/subscriptions/properties: every change validated first, then applied at once. */
export async function doUpdateSubscriptionProperties(deps: AppDeps, who: Identity, changes: PropertyChange[]): Promise<void> {
  const viewer = viewerOf(who);
  const checked: Array<{ streamId: number; property: string; value: string | boolean }> = [];
  for (const c of changes) {
    // Zulip's order: the property's name, then the channel, then the value.
    if (!(SUBSCRIPTION_PROPERTIES as readonly string[]).includes(c.property)) throw badRequest(`Unknown subscription property: ${c.property}`);
    const { stream, sub } = await accessStreamById(deps.pool, viewer, c.stream_id);
    if (!sub?.active) throw badRequest(`Not subscribed to channel ID ${stream.id}`);
    if (c.property === "color") {
      if (typeof c.value !== "string") throw badRequest("color is not a string");
      if (!HEX_COLOR.test(c.value)) throw badRequest("color is not a valid hex color code");
    } else if (typeof c.value !== "boolean") {
      throw badRequest(`${c.property} is not a boolean`);
    }
    checked.push({ streamId: stream.id, property: c.property, value: c.value });
  }
  await withTx(deps.pool, async (tx) => {
    for (const c of checked) {
      // `in_home_view` is the inverse of `is_muted`; clients hear about both, in_home_view first.
      const events: Array<[string, string | boolean]> =
        c.property === "in_home_view"
          ? [["in_home_view", c.value], ["is_muted", !c.value]]
          : c.property === "is_muted"
            ? [["in_home_view", !c.value], ["is_muted", c.value]]
            : [[c.property, c.value]];
      const stored = events[events.length - 1];
      await updateSubscriptionProperty(tx, who.realmId, who.userId, c.streamId, stored[0], stored[1]);
      for (const [property, value] of events) {
        const event = { type: "subscription", op: "update", stream_id: c.streamId, property, value };
        await emitEvent(tx, {
          type: "messaging.subscription.updated",
          realmId: who.realmId,
          payload: MessagingSubscriptionUpdated.parse({ user_id: who.userId, client: { event, users: [who.userId] } }),
        });
      }
    }
  });
}

/**
 * PATCH /users/me/subscriptions/{stream_id}, the older one-property form: `value` is a JSON
 * boolean, or else taken as the raw string (a color), as Zulip's `Json[bool] | str` reads it.
 */
export async function doUpdateSubscriptionProperty(deps: AppDeps, who: Identity, streamId: number, property: string, raw: string): Promise<void> {
  const value = raw === "true" ? true : raw === "false" ? false : raw;
  await doUpdateSubscriptionProperties(deps, who, [{ stream_id: streamId, property, value }]);
}
