import type { StreamObject, SubscriptionObject } from "@chat/contracts";
import type { AppDeps } from "../deps";
import { streamObject, subscriptionObject } from "../lib/format";
import { selectRealmStreams, type StreamRow } from "../store/streams";
import { selectSubscriberIds, selectUserSubscriptions } from "../store/subscriptions";
import { canSeeStream, canSeeSubscribers, trafficFor, type Viewer } from "./streams";

export interface SubscriptionState {
  subscriptions: SubscriptionObject[];
  unsubscribed: SubscriptionObject[];
  never_subscribed: StreamObject[];
}

/** Zulip's gather_subscriptions: active, formerly subscribed, and visible never-subscribed channels. */
export async function gatherSubscriptions(deps: AppDeps, viewer: Viewer, includeSubscribers: boolean): Promise<SubscriptionState> {
  const streams = await selectRealmStreams(deps.pool, viewer.realmId);
  const subs = new Map((await selectUserSubscriptions(deps.pool, viewer.realmId, viewer.userId)).map((s) => [s.streamId, s]));
  const traffic = await trafficFor(deps, viewer.realmId, streams);
  const subscribers = includeSubscribers ? await selectSubscriberIds(deps.pool, viewer.realmId, streams.map((s) => s.id)) : new Map<number, number[]>();
  const subscribersOf = (s: StreamRow) => {
    if (!includeSubscribers) return undefined;
    return canSeeSubscribers(viewer, s, subs.get(s.id)) ? (subscribers.get(s.id) ?? []) : [];
  };
  const out: SubscriptionState = { subscriptions: [], unsubscribed: [], never_subscribed: [] };
  for (const s of streams) {
    const sub = subs.get(s.id);
    const t = traffic.get(s.id) ?? null;
    if (sub?.active) out.subscriptions.push(subscriptionObject(s, sub, t, subscribersOf(s)));
    else if (sub) out.unsubscribed.push(subscriptionObject(s, sub, t, subscribersOf(s)));
    else if (canSeeStream(viewer, s, undefined)) {
      const obj = streamObject(s, t);
      const subscriberList = subscribersOf(s);
      if (subscriberList) obj.subscribers = subscriberList;
      out.never_subscribed.push(obj);
    }
  }
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
  out.subscriptions.sort(byName);
  out.unsubscribed.sort(byName);
  out.never_subscribed.sort(byName);
  return out;
}

/** GET /users/me/subscriptions. */
export async function getSubscriptions(deps: AppDeps, viewer: Viewer, includeSubscribers: boolean): Promise<SubscriptionObject[]> {
  return (await gatherSubscriptions(deps, viewer, includeSubscribers)).subscriptions;
}

/** Register's `streams`: every channel the viewer can see (administrators see private ones too). */
export async function visibleStreams(deps: AppDeps, viewer: Viewer): Promise<StreamObject[]> {
  const streams = await selectRealmStreams(deps.pool, viewer.realmId);
  const subs = new Map((await selectUserSubscriptions(deps.pool, viewer.realmId, viewer.userId)).map((s) => [s.streamId, s]));
  const visible = streams.filter((s) => canSeeStream(viewer, s, subs.get(s.id)));
  const traffic = await trafficFor(deps, viewer.realmId, visible);
  return visible.map((s) => streamObject(s, traffic.get(s.id) ?? null));
}
