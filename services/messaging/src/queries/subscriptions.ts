import type { StreamObject, SubscriptionObject } from "@chat/contracts";
import type { AppDeps } from "../deps";
import { streamObject, subscriptionObject } from "../lib/format";
import { selectRealmStreams, type StreamRow } from "../store/streams";
import { selectSubscriberIds, selectUserSubscriptions, type SubscriptionRow } from "../store/subscriptions";
import { byStreamName, canSeeStream, canSeeSubscribers, trafficFor, type Viewer } from "./streams";

export interface SubscriptionState {
  subscriptions: SubscriptionObject[];
  unsubscribed: SubscriptionObject[];
  never_subscribed: StreamObject[];
}

/** The organization's channels with the viewer's subscription rows and every channel's traffic. */
export interface ChannelView {
  streams: StreamRow[];
  subs: Map<number, SubscriptionRow>;
  traffic: Map<number, number | null>;
}

/** Read once per register and shared by its subscription, channel and unread parts. */
export async function readChannelView(deps: AppDeps, viewer: Viewer): Promise<ChannelView> {
  const [streams, subs] = await Promise.all([
    selectRealmStreams(deps.pool, viewer.realmId),
    selectUserSubscriptions(deps.pool, viewer.realmId, viewer.userId),
  ]);
  const traffic = await trafficFor(deps, viewer.realmId, streams);
  return { streams, subs: new Map(subs.map((s) => [s.streamId, s])), traffic };
}

/**
 * Zulip's gather_subscriptions: active, formerly subscribed, and visible never-subscribed channels.
 * A formerly subscribed channel the viewer can no longer see (a private one left, a public one
 * for a guest) is left out: the project's rule is that a hidden channel answers as a missing
 * one, and leaving it sent the viewer its `stream` / `delete` (Zulip 9 still lists it here).
 */
export async function gatherSubscriptions(
  deps: AppDeps,
  viewer: Viewer,
  includeSubscribers: boolean,
  view: Promise<ChannelView> = readChannelView(deps, viewer),
): Promise<SubscriptionState> {
  const { streams, subs, traffic } = await view;
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
    else if (sub && canSeeStream(viewer, s, undefined)) out.unsubscribed.push(subscriptionObject(s, sub, t, subscribersOf(s)));
    else if (canSeeStream(viewer, s, undefined)) {
      const obj = streamObject(s, t);
      const subscriberList = subscribersOf(s);
      if (subscriberList) obj.subscribers = subscriberList;
      out.never_subscribed.push(obj);
    }
  }
  out.subscriptions.sort(byStreamName);
  out.unsubscribed.sort(byStreamName);
  out.never_subscribed.sort(byStreamName);
  return out;
}

/** GET /users/me/subscriptions. */
export async function getSubscriptions(deps: AppDeps, viewer: Viewer, includeSubscribers: boolean): Promise<SubscriptionObject[]> {
  return (await gatherSubscriptions(deps, viewer, includeSubscribers)).subscriptions;
}

/** Register's `streams`: every channel the viewer can see (administrators see private ones too). */
export async function visibleStreams(deps: AppDeps, viewer: Viewer, view: Promise<ChannelView> = readChannelView(deps, viewer)): Promise<StreamObject[]> {
  const { streams, subs, traffic } = await view;
  return streams.filter((s) => canSeeStream(viewer, s, subs.get(s.id))).map((s) => streamObject(s, traffic.get(s.id) ?? null));
}
