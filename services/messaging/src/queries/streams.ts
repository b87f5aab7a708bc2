import { badRequest, streamDoesNotExist, type Identity, type Queryable } from "@chat/platform";
import type { StreamObject } from "@chat/contracts";
import type { AppDeps } from "../deps";
import { streamObject, weeklyTraffic } from "../lib/format";
import { isAdminRole, isGuestRole } from "../lib/permissions";
import {
  selectRealmStreams,
  selectReceivedTopics,
  selectRecentTraffic,
  selectStreamById,
  selectStreamByName,
  selectStreamTopics,
  type StreamRow,
} from "../store/streams";
import { selectSubscriberIds, selectSubscription, selectUserSubscriptions, type SubscriptionRow } from "../store/subscriptions";
import { selectDefaultStreamIds } from "../store/default-streams";
import { getUser } from "./users";

export interface Viewer {
  userId: number;
  realmId: number;
  role: number;
}

export const viewerOf = (who: Identity): Viewer => ({ userId: who.userId, realmId: who.realmId, role: who.role });

/** Whether the viewer may know the channel exists (Zulip's metadata access). */
export function canSeeStream(viewer: Viewer, stream: StreamRow, sub: SubscriptionRow | null | undefined): boolean {
  if (stream.deactivated) return false;
  if (sub?.active) return true;
  if (stream.isWebPublic) return true;
  if (!stream.inviteOnly) return !isGuestRole(viewer.role);
  return isAdminRole(viewer.role);
}

/** Whether the viewer may read the channel's whole history (not only what they received). */
export function canAccessHistory(viewer: Viewer, stream: StreamRow, sub: SubscriptionRow | null | undefined): boolean {
  if (stream.deactivated) return false;
  if (stream.isWebPublic) return true;
  if (!stream.inviteOnly && !isGuestRole(viewer.role)) return true;
  return Boolean(sub?.active) && stream.historyPublicToSubscribers;
}

/** Who may see a channel's subscriber list: anyone who can see a public channel; members of a private one (and admins). */
export function canSeeSubscribers(viewer: Viewer, stream: StreamRow, sub: SubscriptionRow | null | undefined): boolean {
  if (stream.deactivated) return false;
  if (sub?.active) return true;
  if (!stream.inviteOnly) return !isGuestRole(viewer.role) || stream.isWebPublic;
  return isAdminRole(viewer.role);
}

export interface AccessedStream {
  stream: StreamRow;
  sub: SubscriptionRow | null;
}

/**
 * A channel of the viewer's organization by id or name, and the viewer's subscription to it,
 * whether or not the viewer may see it (Zulip's `..._access_unchecked` lookups): for callers
 * that check access themselves, such as a send or a narrow.
 */
export async function findStream(db: Queryable, viewer: Viewer, idOrName: number | string): Promise<AccessedStream | null> {
  const stream = typeof idOrName === "number" ? await selectStreamById(db, viewer.realmId, idOrName) : await selectStreamByName(db, viewer.realmId, idOrName);
  if (!stream) return null;
  return { stream, sub: await selectSubscription(db, viewer.realmId, viewer.userId, stream.id) };
}

/** A channel by id the viewer can see, else null (a hidden channel looks missing). */
export async function findVisibleStreamById(db: Queryable, viewer: Viewer, id: number): Promise<AccessedStream | null> {
  const found = await findStream(db, viewer, id);
  return found && canSeeStream(viewer, found.stream, found.sub) ? found : null;
}

export async function findVisibleStreamByName(db: Queryable, viewer: Viewer, name: string): Promise<AccessedStream | null> {
  const found = await findStream(db, viewer, name);
  return found && canSeeStream(viewer, found.stream, found.sub) ? found : null;
}

/** Zulip's access_stream_by_id: `Invalid channel ID` for missing or hidden channels. */
export async function accessStreamById(db: Queryable, viewer: Viewer, id: number): Promise<AccessedStream> {
  const found = await findVisibleStreamById(db, viewer, id);
  if (!found) throw badRequest("Invalid channel ID");
  return found;
}

/** Zulip's access_stream_by_name: `Invalid channel name 'x'` for missing or hidden channels. */
export async function accessStreamByName(db: Queryable, viewer: Viewer, name: string): Promise<AccessedStream> {
  const found = await findVisibleStreamByName(db, viewer, name);
  if (!found) throw badRequest(`Invalid channel name '${name}'`);
  return found;
}

export async function accessStreamByNameOrDoesNotExist(db: Queryable, viewer: Viewer, name: string): Promise<AccessedStream> {
  const found = await findVisibleStreamByName(db, viewer, name);
  if (!found) throw streamDoesNotExist({ name });
  return found;
}

const DAY_MS = 86_400_000;
/**
 * How long a channel's four-week message count is reused. Zulip serves `stream_weekly_traffic`
 * from analytics tables that a periodic job fills, so its figure is also minutes to hours old.
 */
const TRAFFIC_TTL_MS = 10 * 60_000;
/** Entries kept before expired ones are swept (one per channel counted recently). */
const TRAFFIC_SWEEP_AT = 50_000;
/** Four-week message counts by channel id (ids are unique in the deployment), per app instance. */
const trafficCounts = new WeakMap<AppDeps, Map<number, { count: number; at: number }>>();

/**
 * Traffic estimates for channel objects. Every register and subscription list asks for the
 * viewer's channels; counting a busy organization's last four weeks each time cost what those
 * weeks hold, so a channel's count is reused for TRAFFIC_TTL_MS. Channels under a week old have
 * no estimate (null) and are not counted.
 */
export async function trafficFor(deps: AppDeps, realmId: number, streams: StreamRow[]): Promise<Map<number, number | null>> {
  const now = deps.clock.now();
  const t = now.getTime();
  let cache = trafficCounts.get(deps);
  if (!cache) trafficCounts.set(deps, (cache = new Map()));
  const stale = streams.filter((s) => {
    if (t - s.dateCreated.getTime() < 7 * DAY_MS) return false;
    const known = cache.get(s.id);
    return !known || t - known.at >= TRAFFIC_TTL_MS || t < known.at;
  });
  if (stale.length > 0) {
    const counts = await selectRecentTraffic(deps.pool, realmId, stale.map((s) => s.id), new Date(t - 28 * DAY_MS));
    if (cache.size + stale.length > TRAFFIC_SWEEP_AT) {
      for (const [id, known] of cache) if (t - known.at >= TRAFFIC_TTL_MS) cache.delete(id);
    }
    for (const s of stale) cache.set(s.id, { count: counts.get(s.id) ?? 0, at: t });
  }
  return new Map(streams.map((s) => [s.id, weeklyTraffic(s, cache.get(s.id)?.count ?? 0, now)]));
}

export async function toStreamObjects(deps: AppDeps, realmId: number, streams: StreamRow[]): Promise<StreamObject[]> {
  const traffic = await trafficFor(deps, realmId, streams);
  return streams.map((s) => streamObject(s, traffic.get(s.id) ?? null));
}

export interface StreamListOptions {
  includePublic: boolean;
  includeWebPublic: boolean;
  includeSubscribed: boolean;
  includeAllActive: boolean;
  includeDefault: boolean;
  includeOwnerSubscribed: boolean;
}

/** Ids of the channels a user is subscribed to. */
async function subscribedIds(db: Queryable, realmId: number, userId: number): Promise<Set<number>> {
  return new Set((await selectUserSubscriptions(db, realmId, userId)).filter((s) => s.active).map((s) => s.streamId));
}

/**
 * Channel lists are in name order, as Zulip sends them: Python compares code points, capitals
 * first; UTF-16 units order the same but for characters above U+FFFF against U+E000-U+FFFF.
 */
export const byStreamName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * GET /streams: the channels the flags select, among those the viewer can see.
 * `include_owner_subscribed` makes a bot's "subscribed" its owner's channels instead of its own
 * (private ones too), as in Zulip.
 */
export async function getStreams(deps: AppDeps, viewer: Viewer, opts: StreamListOptions): Promise<StreamObject[]> {
  if (opts.includeAllActive && !isAdminRole(viewer.role)) throw badRequest("User not authorized for this query");
  const streams = await selectRealmStreams(deps.pool, viewer.realmId);
  const me = opts.includeOwnerSubscribed ? await getUser(deps, viewer.realmId, viewer.userId) : null;
  const owner = me?.isBot ? me.botOwnerId : null;
  const subscribed =
    owner !== null ? await subscribedIds(deps.pool, viewer.realmId, owner) : opts.includeSubscribed ? await subscribedIds(deps.pool, viewer.realmId, viewer.userId) : new Set<number>();
  const guest = isGuestRole(viewer.role);
  const chosen = streams.filter((s) => {
    if (opts.includeAllActive) return true;
    if (subscribed.has(s.id)) return true;
    if (opts.includeWebPublic && s.isWebPublic) return true;
    if (opts.includePublic && !guest && !s.inviteOnly) return true;
    return false;
  });
  const objects = (await toStreamObjects(deps, viewer.realmId, chosen)).sort(byStreamName);
  if (opts.includeDefault) {
    const defaults = await selectDefaultStreamIds(deps.pool, viewer.realmId);
    for (const o of objects) o.is_default = defaults.has(o.stream_id);
  }
  return objects;
}

export async function getStreamById(deps: AppDeps, viewer: Viewer, id: number): Promise<StreamObject> {
  const { stream } = await accessStreamById(deps.pool, viewer, id);
  return (await toStreamObjects(deps, viewer.realmId, [stream]))[0];
}

/**
 * GET /streams/{stream_id}/email_address: the channel's email gateway address. There is no
 * email gateway here, so it is empty (Zulip's answer without EMAIL_GATEWAY_PATTERN); the access
 * check is GET /streams/{stream_id}'s, so a channel the caller cannot reach is an invalid one.
 */
export async function getStreamEmailAddress(deps: AppDeps, viewer: Viewer, id: number): Promise<string> {
  await accessStreamById(deps.pool, viewer, id);
  return "";
}

/**
 * GET /streams/{stream_id}/members: the channel's active subscribers, for whoever may see the
 * channel (administrators a private one too) and its subscriber list.
 */
export async function getStreamMembers(deps: AppDeps, viewer: Viewer, id: number): Promise<number[]> {
  const { stream, sub } = await accessStreamById(deps.pool, viewer, id);
  if (!canSeeSubscribers(viewer, stream, sub)) {
    throw badRequest(stream.inviteOnly ? "Unable to retrieve subscribers for private channel" : "Subscriber data is not available for this channel");
  }
  return (await selectSubscriberIds(deps.pool, viewer.realmId, [stream.id])).get(stream.id) ?? [];
}

/**
 * GET /users/{user_id}/subscriptions/{stream_id}: whether an active human user of the organization
 * is subscribed to a channel the viewer may see (Zulip's access_user_by_id with its defaults, so a
 * bot is `No such user`, then access_stream_by_id with the administrator exception).
 */
export async function getSubscriptionStatus(deps: AppDeps, viewer: Viewer, userId: number, streamId: number): Promise<boolean> {
  const user = await getUser(deps, viewer.realmId, userId);
  if (!user || user.isBot) throw badRequest("No such user");
  if (!user.isActive) throw badRequest("User is deactivated");
  const { stream } = await accessStreamById(deps.pool, viewer, streamId);
  return Boolean((await selectSubscription(deps.pool, viewer.realmId, userId, stream.id))?.active);
}

/**
 * GET /users/me/{stream_id}/topics, newest first. A private channel's topics are for its
 * subscribers, administrators included (Zulip's access_stream_by_id without the administrator
 * exception); with protected history, the topics of the messages one received.
 */
export async function getStreamTopics(deps: AppDeps, viewer: Viewer, id: number): Promise<Array<{ name: string; max_id: number }>> {
  const { stream, sub } = await accessStreamById(deps.pool, viewer, id);
  if (stream.inviteOnly && !sub?.active) throw badRequest("Invalid channel ID");
  const topics = canAccessHistory(viewer, stream, sub)
    ? await selectStreamTopics(deps.pool, viewer.realmId, stream.id)
    : await selectReceivedTopics(deps.pool, viewer.realmId, viewer.userId, stream.id);
  return topics.map((t) => ({ name: t.name, max_id: t.maxId }));
}

/** GET /get_stream_id: hidden and missing channels give the same answer. */
export async function getStreamId(deps: AppDeps, viewer: Viewer, name: string): Promise<number> {
  return (await accessStreamByName(deps.pool, viewer, name)).stream.id;
}

/** The existing channel by exact lookup, regardless of visibility (for creation conflicts). */
export async function streamExists(db: Queryable, realmId: number, name: string): Promise<StreamRow | null> {
  return selectStreamByName(db, realmId, name);
}

export { selectStreamById };
