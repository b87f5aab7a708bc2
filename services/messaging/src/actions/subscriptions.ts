import {
  MessagingMessageFlagsUpdated,
  MessagingStreamCreated,
  MessagingStreamHidden,
  MessagingStreamRevealed,
  MessagingSubscriptionAdded,
  MessagingSubscriptionPeerAdded,
  MessagingSubscriptionPeerRemoved,
  MessagingSubscriptionRemoved,
  type InternalRealm,
} from "@chat/contracts";
import { ApiError, badRequest, emitEvent, streamDoesNotExist, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { pickColor, streamObject, subscriptionObject } from "../lib/format";
import { checkStreamDescription, checkStreamName } from "../lib/normalize";
import { isAdminRole, isGuestRole, passesCommonPolicy } from "../lib/permissions";
import { streamWatchers } from "../queries/audiences";
import { renderChannelDescription } from "../queries/mentions";
import { canSeeStream, findVisibleStreamByName, trafficFor, viewerOf, type Viewer } from "../queries/streams";
import { getUser, getUsersByEmails, getUsersByIds } from "../queries/users";
import { insertStream, selectStreamsByIds, selectStreamsByNames, type StreamRow } from "../store/streams";
import {
  deactivateSubscription,
  selectSubscriberIds,
  selectSubscriptionsForUpdate,
  selectUserSubscriptions,
  upsertActiveSubscription,
} from "../store/subscriptions";
import type { UserRow } from "../store/users";
import { markChannelsRead } from "../store/usermessages";
import { selectDefaultStreamIds } from "../store/default-streams";
import { notifySubscriptionsDone, type SubscriptionsDone } from "./channel-notices";
import { addDefaultStream } from "./default-streams";
import { accessBeforeInTx, notifyAccessChangedInTx } from "./user-access";

export interface SubscribeRequest {
  /** `color` (PATCH /users/me/subscriptions) is the new subscriptions' color instead of a picked one. */
  streams: Array<{ name: string; description?: string; color?: string }>;
  principals?: number[] | string[];
  authorizationErrorsFatal: boolean;
  inviteOnly: boolean;
  isWebPublic: boolean;
  /** New channels become default channels (administrators only). */
  isDefaultStream?: boolean;
  historyPublicToSubscribers?: boolean;
  streamPostPolicy: number;
  /** `"realm_default"`, `"unlimited"` or days; any other value is refused by retentionDays. */
  messageRetentionDays: string | number;
  canRemoveSubscribersGroup?: number;
  /** Announce new channels in the organization's announcement channel. */
  announce?: boolean;
}

export interface SubscribeResult {
  subscribed: Record<string, string[]>;
  already_subscribed: Record<string, string[]>;
  unauthorized?: string[];
}

/** Principals (ids or emails) as active users of the realm; anything else is `No such user`. */
export async function resolvePrincipals(deps: AppDeps, realmId: number, principals: number[] | string[]): Promise<UserRow[]> {
  if (principals.length === 0) return [];
  let users: Array<UserRow | undefined>;
  if (typeof principals[0] === "number") {
    const found = await getUsersByIds(deps, realmId, principals as number[]);
    users = (principals as number[]).map((id) => found.get(id));
  } else {
    const found = await getUsersByEmails(deps, realmId, principals as string[]);
    users = (principals as string[]).map((e) => found.get(e.toLowerCase()));
  }
  if (users.some((u) => !u)) throw badRequest("No such user");
  const resolved = [...new Map((users as UserRow[]).map((u) => [u.id, u])).values()];
  const active = await activeNow(deps, realmId, resolved);
  if (resolved.some((u) => !active.has(u.id))) throw badRequest("No such user");
  return resolved;
}

/**
 * Which of these users are active, asked of accounts: the replica follows its events about a
 * second behind, and a user deactivated a moment ago must not be subscribed (or kept from a
 * channel when just reactivated). Should accounts not answer, the replica's word stands.
 */
async function activeNow(deps: AppDeps, realmId: number, users: UserRow[]): Promise<Set<number>> {
  try {
    const current = await deps.accounts.getUsers(realmId, { userIds: users.map((u) => u.id) });
    return new Set(current.filter((u) => u.is_active).map((u) => u.user_id));
  } catch (err) {
    deps.log.warn({ err: (err as Error).message, realmId }, "principals checked against the users replica: accounts did not answer");
    return new Set(users.filter((u) => u.isActive).map((u) => u.id));
  }
}

/**
 * POST /users/me/subscriptions: creates missing channels, subscribes the caller or `principals`,
 * then the notification bot tells of it (as Zulip's add_subscriptions_backend).
 */
export async function doAddSubscriptions(deps: AppDeps, who: Identity, req: SubscribeRequest): Promise<SubscribeResult> {
  const { response, realm, done } = await bulkAddSubscriptions(deps, who, req);
  await notifySubscriptionsDone(deps, realm, done);
  return response;
}

/**
 * The subscribing itself, every check included, without the notification bot's messages (Zulip's
 * bulk_add_subscriptions, which its tests' helpers call too).
 */
export async function bulkAddSubscriptions(
  deps: AppDeps,
  who: Identity,
  req: SubscribeRequest,
): Promise<{ response: SubscribeResult; realm: InternalRealm; done: SubscriptionsDone }> {
  const now = deps.clock.now();
  const realm = await deps.accounts.getRealm(who.realmId);
  const caller = await getUser(deps, who.realmId, who.userId);
  if (!caller) throw badRequest("No such user");
  // Zulip reads the retention value before anything else, whether or not a channel is created.
  retentionDays(req.messageRetentionDays);
  // Zulip's order: the right to subscribe others, judged from the principals as sent (any but the
  // caller's own id, an email included, counts as another user), then the principals, then the
  // channels. An empty list is the caller, as an absent one.
  const others = (req.principals ?? []).some((p) => p !== caller.id);
  if (others && !passesCommonPolicy(realm.settings.invite_to_stream_policy, caller, realm.settings.waiting_period_threshold, now)) {
    throw badRequest("Insufficient permission");
  }
  const targets = req.principals?.length ? await resolvePrincipals(deps, who.realmId, req.principals) : [caller];
  const wanted = new Map<string, { name: string; description: string }>();
  const colors = new Map<string, string>();
  for (const s of req.streams) {
    const name = checkStreamName(s.name);
    if (!wanted.has(name.toLowerCase())) wanted.set(name.toLowerCase(), { name, description: checkStreamDescription(s.description ?? "") });
    if (s.color !== undefined) colors.set(name.toLowerCase(), s.color);
  }
  const existing = await selectStreamsByNames(deps.pool, who.realmId, [...wanted.keys()]);
  const callerSubs = new Map((await selectUserSubscriptions(deps.pool, who.realmId, who.userId)).map((s) => [s.streamId, s]));
  const authorized: StreamRow[] = [];
  const unauthorized: string[] = [];
  for (const stream of existing) {
    const ok = callerSubs.get(stream.id)?.active || stream.isWebPublic || (!stream.inviteOnly && !isGuestRole(caller.role));
    if (ok) authorized.push(stream);
    else unauthorized.push(stream.name);
  }
  if (unauthorized.length > 0 && req.authorizationErrorsFatal) throw badRequest(`Unable to access channel (${unauthorized[0]}).`);
  const toCreate = [...wanted.entries()].filter(([lower]) => !existing.some((s) => s.name.toLowerCase() === lower)).map(([, v]) => v);
  if (toCreate.length > 0) checkCanCreate(req, caller, realm, now);
  if (toCreate.length > 0 && req.canRemoveSubscribersGroup !== undefined) await checkGroup(deps, realm, req.canRemoveSubscribersGroup);
  const settings = toCreate.length > 0 ? newStreamSettings(req, caller, realm) : null;
  const rendered = await Promise.all(toCreate.map((s) => renderChannelDescription(deps, viewerOf(who), s.description)));

  const { out: result, created, streams } = await withTx(deps.pool, async (tx) => {
    const created: StreamRow[] = [];
    for (const [i, s] of toCreate.entries()) {
      const stream = await insertStream(tx, {
        realmId: who.realmId,
        name: s.name,
        description: s.description,
        renderedDescription: rendered[i],
        dateCreated: now,
        creatorId: caller.id,
        ...settings!,
      });
      if (!stream) throw badRequest(`Channel name '${s.name}' is already in use.`);
      created.push(stream);
    }
    const streams = [...authorized, ...created].sort((a, b) => a.id - b.id);
    const access = await accessBeforeInTx(tx, realm, targets.map((u) => u.id), streams.map((s) => s.id));
    const out = await subscribeUsers(tx, deps, who.realmId, targets, streams, colors);
    await notifyCreated(tx, deps, created, out.added);
    if (req.isDefaultStream) for (const s of created) await addDefaultStream(tx, deps, who.realmId, s.id);
    await notifyRevealed(tx, who.realmId, authorized, out.added, targets);
    await notifyAdded(tx, deps, who.realmId, streams, out.added);
    await notifyAccessChangedInTx(tx, access);
    return { out, created, streams };
  });
  const response: SubscribeResult = { subscribed: result.subscribed, already_subscribed: result.alreadySubscribed };
  if (!req.authorizationErrorsFatal) response.unauthorized = unauthorized;
  return { response, realm, done: { actor: caller, targets, created, streams, added: result.added, announce: req.announce ?? false } };
}

/**
 * Internal: a user who just accepted an invitation joins its channels that still exist, and with
 * `includeDefault` the organization's default channels (no acting user, as in Zulip: the
 * inviter's access was checked when inviting). Subscribing twice is a no-op.
 */
export async function doSubscribeNewUser(deps: AppDeps, realmId: number, userId: number, streamIds: number[], includeDefault = false): Promise<number[]> {
  const user = await getUser(deps, realmId, userId);
  if (!user || !user.isActive) throw badRequest("No such user");
  const ids = new Set(streamIds);
  if (includeDefault) for (const id of await selectDefaultStreamIds(deps.pool, realmId)) ids.add(id);
  const streams = (await selectStreamsByIds(deps.pool, realmId, [...ids])).filter((s) => !s.deactivated).sort((a, b) => a.id - b.id);
  if (streams.length === 0) return [];
  const realm = await deps.accounts.getRealm(realmId);
  await withTx(deps.pool, async (tx) => {
    const access = await accessBeforeInTx(tx, realm, [user.id], streams.map((s) => s.id));
    const out = await subscribeUsers(tx, deps, realmId, [user], streams);
    await notifyRevealed(tx, realmId, streams, out.added, [user]);
    await notifyAdded(tx, deps, realmId, streams, out.added);
    await notifyAccessChangedInTx(tx, access);
  });
  return streams.map((s) => s.id);
}

/**
 * Zulip's checks for creating channels, in its order: the private or public creation policy, a
 * default channel's (administrators, not private), then a web-public one's (spectator access
 * enabled, its own creation policy).
 */
function checkCanCreate(req: SubscribeRequest, caller: UserRow, realm: InternalRealm, now: Date): void {
  const s = realm.settings;
  const passes = (policy: number) => passesCommonPolicy(policy, caller, s.waiting_period_threshold, now);
  if (!passes(req.inviteOnly ? s.create_private_stream_policy : s.create_public_stream_policy)) throw badRequest("Insufficient permission");
  if (req.isDefaultStream) {
    if (!isAdminRole(caller.role)) throw badRequest("Insufficient permission");
    if (req.inviteOnly) throw badRequest("A default channel cannot be private.");
  }
  if (req.isWebPublic) {
    if (!s.enable_spectator_access) throw badRequest("Web-public channels are not enabled.");
    if (!passes(s.create_web_public_stream_policy)) throw badRequest("Insufficient permission");
  }
}

/** A channel's permission group must be one of the organization's groups (not `role:internet`). */
export async function checkGroup(deps: AppDeps, realm: InternalRealm, groupId: number): Promise<void> {
  if (realm.system_groups["role:internet"] === groupId) throw badRequest("Invalid user group");
  if (Object.values(realm.system_groups).includes(groupId)) return;
  const groups = await deps.accounts.getUserGroups(realm.id);
  if (!groups.some((g) => g.id === groupId)) throw badRequest("Invalid user group");
}

/** Zulip's OrganizationOwnerRequiredError, as accounts raises it. */
export function checkOwner(role: number): void {
  if (role > 100) throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
}

/** A channel's message_retention_days as stored: null (the organization's), -1 (forever) or days. */
export function retentionDays(value: string | number): number | null {
  if (value === "realm_default") return null;
  if (value === "unlimited") return -1;
  // Zulip's parse_message_retention_days: any other string (`"forever"`) is a bad value too.
  if (typeof value === "string" || value < 1) throw new ApiError("REQUEST_VARIABLE_INVALID", `Bad value for 'message_retention_days': ${value}`);
  return value;
}

function newStreamSettings(req: SubscribeRequest, caller: UserRow, realm: InternalRealm) {
  const retention = retentionDays(req.messageRetentionDays);
  if (retention !== null) checkOwner(caller.role);
  const group = req.canRemoveSubscribersGroup ?? realm.system_groups["role:administrators"];
  const inviteOnly = req.inviteOnly && !req.isWebPublic;
  return {
    inviteOnly,
    isWebPublic: req.isWebPublic,
    historyPublicToSubscribers: inviteOnly ? (req.historyPublicToSubscribers ?? false) : true,
    streamPostPolicy: req.streamPostPolicy,
    messageRetentionDays: retention,
    canRemoveSubscribersGroup: group,
  };
}

interface SubscribeOutcome {
  subscribed: Record<string, string[]>;
  alreadySubscribed: Record<string, string[]>;
  /** stream id -> newly subscribed user ids */
  added: Map<number, number[]>;
}

/** `colors` (by lower-cased channel name) are used for new subscriptions instead of a picked color. */
async function subscribeUsers(
  tx: Queryable,
  deps: AppDeps,
  realmId: number,
  users: UserRow[],
  streams: StreamRow[],
  colors: Map<string, string> = new Map(),
): Promise<SubscribeOutcome> {
  const out: SubscribeOutcome = { subscribed: {}, alreadySubscribed: {}, added: new Map() };
  const rows = await selectSubscriptionsForUpdate(tx, realmId, users.map((u) => u.id), streams.map((s) => s.id));
  const active = new Set(rows.filter((r) => r.active).map((r) => `${r.userId}:${r.streamId}`));
  for (const user of users) {
    const own = await selectUserSubscriptions(tx, realmId, user.id);
    const used = new Set(own.map((s) => s.color));
    for (const stream of streams) {
      const key = String(user.id);
      if (active.has(`${user.id}:${stream.id}`)) {
        (out.alreadySubscribed[key] ??= []).push(stream.name);
        continue;
      }
      const color = colors.get(stream.name.toLowerCase()) ?? pickColor(used, own.length);
      if (!(await upsertActiveSubscription(tx, realmId, user.id, stream.id, color))) {
        (out.alreadySubscribed[key] ??= []).push(stream.name);
        continue;
      }
      used.add(color);
      (out.subscribed[key] ??= []).push(stream.name);
      const list = out.added.get(stream.id) ?? [];
      list.push(user.id);
      out.added.set(stream.id, list);
    }
  }
  return out;
}

async function notifyCreated(tx: Queryable, deps: AppDeps, created: StreamRow[], added: Map<number, number[]>): Promise<void> {
  for (const stream of created) {
    const users = await streamWatchers(deps, stream, added.get(stream.id) ?? []);
    const event = { type: "stream", op: "create", streams: [streamObject(stream, null)] };
    await emitEvent(tx, {
      type: "messaging.stream.created",
      realmId: stream.realmId,
      payload: MessagingStreamCreated.parse({ stream_id: stream.id, client: { event, users } }),
    });
  }
}

/** The user's role alone decides whether they see a channel they are not subscribed to. */
const seesUnsubscribed = (realmId: number, user: UserRow, stream: StreamRow) => canSeeStream({ userId: user.id, realmId, role: user.role }, stream, null);

/**
 * A stream create, before their subscription add, to each newly subscribed user who could not
 * see the channel before (a private channel for a non-administrator, a public one for a guest):
 * their channel list gains it, as in Zulip.
 */
async function notifyRevealed(tx: Queryable, realmId: number, streams: StreamRow[], added: Map<number, number[]>, users: UserRow[]): Promise<void> {
  const byId = new Map(users.map((u) => [u.id, u]));
  for (const s of streams) {
    for (const userId of added.get(s.id) ?? []) {
      const user = byId.get(userId);
      if (!user || seesUnsubscribed(realmId, user, s)) continue;
      const event = { type: "stream", op: "create", streams: [streamObject(s, null)] };
      await emitEvent(tx, {
        type: "messaging.stream.revealed",
        realmId,
        payload: MessagingStreamRevealed.parse({ stream_id: s.id, user_id: userId, client: { event, users: [userId] } }),
      });
    }
  }
}

async function notifyAdded(tx: Queryable, deps: AppDeps, realmId: number, streams: StreamRow[], added: Map<number, number[]>): Promise<void> {
  if (added.size === 0) return;
  const touched = streams.filter((s) => added.has(s.id));
  const subscribers = await selectSubscriberIds(tx, realmId, touched.map((s) => s.id));
  const traffic = await trafficFor(deps, realmId, touched);
  const byUser = new Map<number, StreamRow[]>();
  for (const s of touched) for (const u of added.get(s.id)!) byUser.set(u, [...(byUser.get(u) ?? []), s]);
  for (const [userId, list] of [...byUser.entries()].sort((a, b) => a[0] - b[0])) {
    const subs = new Map((await selectUserSubscriptions(tx, realmId, userId)).map((s) => [s.streamId, s]));
    const event = {
      type: "subscription",
      op: "add",
      subscriptions: list.map((s) => subscriptionObject(s, subs.get(s.id)!, traffic.get(s.id) ?? null, subscribers.get(s.id) ?? [])),
    };
    await emitEvent(tx, {
      type: "messaging.subscription.added",
      realmId,
      payload: MessagingSubscriptionAdded.parse({ user_id: userId, stream_ids: list.map((s) => s.id), client: { event, users: [userId] } }),
    });
  }
  for (const s of touched) {
    const newIds = added.get(s.id)!;
    const audience = (await streamWatchers(deps, s, subscribers.get(s.id) ?? [])).filter((id) => !newIds.includes(id));
    if (audience.length === 0) continue;
    const event = { type: "subscription", op: "peer_add", stream_ids: [s.id], user_ids: newIds };
    await emitEvent(tx, {
      type: "messaging.subscription.peer_added",
      realmId,
      payload: MessagingSubscriptionPeerAdded.parse({ client: { event, users: audience } }),
    });
  }
}

export interface UnsubscribeResult {
  removed: string[];
  not_removed: string[];
}

/** DELETE /users/me/subscriptions with spec 4.10's three rules for removing someone else. */
export async function doRemoveSubscriptions(deps: AppDeps, who: Identity, names: string[], principals?: number[] | string[]): Promise<UnsubscribeResult> {
  const viewer = viewerOf(who);
  const caller = await getUser(deps, who.realmId, who.userId);
  if (!caller) throw badRequest("No such user");
  // The principals before the channels, as Zulip reads them.
  const targets = principals?.length ? await resolvePrincipals(deps, who.realmId, principals) : [caller];
  const streams: StreamRow[] = [];
  for (const name of names) {
    const found = await findVisibleStreamByName(deps.pool, viewer, name.trim());
    if (!found) throw streamDoesNotExist({ name });
    if (!streams.some((s) => s.id === found.stream.id)) streams.push(found.stream);
  }
  const others = targets.filter((t) => t.id !== caller.id);
  if (others.length > 0) {
    for (const stream of streams) await checkCanRemoveOthers(deps, viewer, caller, others, stream);
  }
  const realm = await deps.accounts.getRealm(who.realmId);
  return withTx(deps.pool, async (tx) => {
    const rows = await selectSubscriptionsForUpdate(tx, who.realmId, targets.map((t) => t.id), streams.map((s) => s.id));
    const access = await accessBeforeInTx(tx, realm, targets.map((t) => t.id), streams.map((s) => s.id));
    const active = new Set(rows.filter((r) => r.active).map((r) => `${r.userId}:${r.streamId}`));
    const out: UnsubscribeResult = { removed: [], not_removed: [] };
    const removedBy = new Map<number, StreamRow[]>();
    for (const target of targets) {
      for (const stream of streams) {
        if (!active.has(`${target.id}:${stream.id}`)) {
          out.not_removed.push(stream.name);
          continue;
        }
        await deactivateSubscription(tx, who.realmId, target.id, stream.id);
        out.removed.push(stream.name);
        removedBy.set(target.id, [...(removedBy.get(target.id) ?? []), stream]);
      }
    }
    await notifyRemoved(tx, deps, who.realmId, removedBy, new Map(targets.map((t) => [t.id, t])));
    await notifyAccessChangedInTx(tx, access);
    // What one left unread there is read now (Zulip): unread counts only count subscribed channels.
    for (const [userId, left] of removedBy) {
      const read = await markChannelsRead(tx, who.realmId, userId, left.map((s) => s.id));
      if (read.length === 0) continue;
      const event = { type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: read, all: false };
      await emitEvent(tx, {
        type: "messaging.message_flags.updated",
        realmId: who.realmId,
        payload: MessagingMessageFlagsUpdated.parse({ user_id: userId, client: { event, users: [userId] } }),
      });
    }
    return out;
  });
}

async function checkCanRemoveOthers(deps: AppDeps, viewer: Viewer, caller: UserRow, others: UserRow[], stream: StreamRow): Promise<void> {
  if (isAdminRole(caller.role)) return;
  if (others.every((o) => o.isBot && o.botOwnerId === caller.id)) return;
  if (await deps.accounts.isGroupMember(viewer.realmId, stream.canRemoveSubscribersGroup, caller.id)) return;
  throw badRequest("Insufficient permission");
}

async function notifyRemoved(tx: Queryable, deps: AppDeps, realmId: number, removedBy: Map<number, StreamRow[]>, users: Map<number, UserRow>): Promise<void> {
  const byStream = new Map<number, { stream: StreamRow; userIds: number[] }>();
  for (const [userId, streams] of [...removedBy.entries()].sort((a, b) => a[0] - b[0])) {
    const event = { type: "subscription", op: "remove", subscriptions: streams.map((s) => ({ stream_id: s.id, name: s.name })) };
    await emitEvent(tx, {
      type: "messaging.subscription.removed",
      realmId,
      payload: MessagingSubscriptionRemoved.parse({ user_id: userId, stream_ids: streams.map((s) => s.id), client: { event, users: [userId] } }),
    });
    for (const s of streams) {
      const entry = byStream.get(s.id) ?? { stream: s, userIds: [] };
      entry.userIds.push(userId);
      byStream.set(s.id, entry);
      // The channel disappears from the list of a user who no longer sees it.
      if (!seesUnsubscribed(realmId, users.get(userId)!, s)) {
        const hidden = { type: "stream", op: "delete", streams: [streamObject(s, null)] };
        await emitEvent(tx, {
          type: "messaging.stream.hidden",
          realmId,
          payload: MessagingStreamHidden.parse({ stream_id: s.id, user_id: userId, client: { event: hidden, users: [userId] } }),
        });
      }
    }
  }
  const subscribers = await selectSubscriberIds(tx, realmId, [...byStream.keys()]);
  for (const { stream, userIds } of byStream.values()) {
    const audience = (await streamWatchers(deps, stream, subscribers.get(stream.id) ?? [])).filter((id) => !userIds.includes(id));
    if (audience.length === 0) continue;
    const event = { type: "subscription", op: "peer_remove", stream_ids: [stream.id], user_ids: userIds };
    await emitEvent(tx, {
      type: "messaging.subscription.peer_removed",
      realmId,
      payload: MessagingSubscriptionPeerRemoved.parse({ client: { event, users: audience } }),
    });
  }
}
