import { MessagingStreamAccessGained, MessagingStreamAccessLost, MessagingSubscriptionPeerAdded, MessagingSubscriptionPeerRemoved } from "@chat/contracts";
import { emitEvent, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { streamWatchers } from "../queries/audiences";
import { canSeeStream, toStreamObjects, type Viewer } from "../queries/streams";
import { selectRealmStreams } from "../store/streams";
import { selectSubscriberIds, selectUserSubscriptions } from "../store/subscriptions";

/**
 * A user's role changed (accounts' user update, inside the consumer's transaction): the channels
 * they see only now come to them as one stream create and each channel's subscribers (peer_add),
 * those they no longer see as one stream delete, as Zulip's send_stream_events_for_role_update
 * does (feature level 205): an administrator sees every private channel, a guest no public one
 * they are not in.
 */
export async function notifyRoleChange(tx: Queryable, deps: AppDeps, realmId: number, userId: number, oldRole: number, newRole: number): Promise<void> {
  const streams = await selectRealmStreams(tx, realmId);
  const subs = new Map((await selectUserSubscriptions(tx, realmId, userId)).map((s) => [s.streamId, s]));
  const as = (role: number): Viewer => ({ userId, realmId, role });
  const gained = streams.filter((s) => !canSeeStream(as(oldRole), s, subs.get(s.id)) && canSeeStream(as(newRole), s, subs.get(s.id)));
  const lost = streams.filter((s) => canSeeStream(as(oldRole), s, subs.get(s.id)) && !canSeeStream(as(newRole), s, subs.get(s.id)));
  if (gained.length > 0) {
    const event = { type: "stream", op: "create", streams: await toStreamObjects(deps, realmId, gained) };
    const ids = gained.map((s) => s.id);
    await emitEvent(tx, { type: "messaging.stream.access_gained", realmId, payload: MessagingStreamAccessGained.parse({ stream_ids: ids, client: { event, users: [userId] } }) });
    const subscribers = await selectSubscriberIds(tx, realmId, ids);
    for (const id of ids) {
      const peers = { type: "subscription", op: "peer_add", stream_ids: [id], user_ids: subscribers.get(id) ?? [] };
      await emitEvent(tx, { type: "messaging.subscription.peer_added", realmId, payload: MessagingSubscriptionPeerAdded.parse({ client: { event: peers, users: [userId] } }) });
    }
  }
  if (lost.length > 0) {
    const event = { type: "stream", op: "delete", streams: await toStreamObjects(deps, realmId, lost) };
    await emitEvent(tx, {
      type: "messaging.stream.access_lost",
      realmId,
      payload: MessagingStreamAccessLost.parse({ stream_ids: lost.map((s) => s.id), client: { event, users: [userId] } }),
    });
  }
}

/**
 * A user was deactivated (peer_remove) or reactivated (peer_add): subscriber lists hold active
 * users only, so whoever sees the subscribers of a channel the user is in hears of it, as Zulip's
 * do_deactivate_user and do_reactivate_user tell them.
 */
export async function notifyActivityChange(tx: Queryable, deps: AppDeps, realmId: number, userId: number, active: boolean): Promise<void> {
  const subscribed = new Set((await selectUserSubscriptions(tx, realmId, userId)).filter((s) => s.active).map((s) => s.streamId));
  const streams = (await selectRealmStreams(tx, realmId)).filter((s) => subscribed.has(s.id));
  if (streams.length === 0) return;
  const subscribers = await selectSubscriberIds(tx, realmId, streams.map((s) => s.id));
  for (const stream of streams) {
    const users = (await streamWatchers(deps, stream, subscribers.get(stream.id) ?? [])).filter((id) => id !== userId);
    if (users.length === 0) continue;
    const event = { type: "subscription", op: active ? "peer_add" : "peer_remove", stream_ids: [stream.id], user_ids: [userId] };
    await emitEvent(tx, active
      ? { type: "messaging.subscription.peer_added", realmId, payload: MessagingSubscriptionPeerAdded.parse({ client: { event, users } }) }
      : { type: "messaging.subscription.peer_removed", realmId, payload: MessagingSubscriptionPeerRemoved.parse({ client: { event, users } }) });
  }
}
