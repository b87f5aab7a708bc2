import { badRequest, streamDoesNotExist, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { findVisibleStreamByName, viewerOf } from "../queries/streams";
import { HEX_COLOR } from "./subscription-properties";
import { doAddSubscriptions, doRemoveSubscriptions, type SubscribeResult, type UnsubscribeResult } from "./subscriptions";

/**
 * PATCH /users/me/subscriptions: POST's subscribe with its defaults, then DELETE's unsubscribe,
 * for the caller, answering both (Zulip's compose_views). Everything that can refuse the leaving
 * part is checked before the joining part changes anything, so a refused request changes nothing,
 * as in Zulip, where both run in one transaction.
 */
export async function doUpdateSubscriptions(
  deps: AppDeps,
  who: Identity,
  add: Array<{ name: string; color?: string; description?: string }>,
  remove: string[],
): Promise<SubscribeResult & UnsubscribeResult> {
  if (add.length === 0 && remove.length === 0) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
  for (const s of add) if (s.color !== undefined && !HEX_COLOR.test(s.color)) throw badRequest("color is not a valid hex color code");
  for (const name of remove) {
    if (!(await findVisibleStreamByName(deps.pool, viewerOf(who), name.trim()))) throw streamDoesNotExist({ name });
  }
  const added: SubscribeResult =
    add.length > 0
      ? await doAddSubscriptions(deps, who, { streams: add, authorizationErrorsFatal: true, inviteOnly: false, isWebPublic: false, streamPostPolicy: 1, messageRetentionDays: "realm_default" })
      : { subscribed: {}, already_subscribed: {} };
  const removed: UnsubscribeResult = remove.length > 0 ? await doRemoveSubscriptions(deps, who, remove) : { removed: [], not_removed: [] };
  return { subscribed: added.subscribed, already_subscribed: added.already_subscribed, removed: removed.removed, not_removed: removed.not_removed };
}
