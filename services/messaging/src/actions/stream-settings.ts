import {
  MessagingStreamAccessGained,
  MessagingStreamAccessLost,
  MessagingStreamUpdated,
  MessagingSubscriptionPeerAdded,
  type InternalRealm,
} from "@chat/contracts";
import { ApiError, badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { streamObject } from "../lib/format";
import { checkStreamName } from "../lib/normalize";
import { isAdminRole, passesCommonPolicy } from "../lib/permissions";
import { streamWatchers } from "../queries/audiences";
import { renderChannelDescription } from "../queries/mentions";
import { findStream, trafficFor, viewerOf } from "../queries/streams";
import { getUser } from "../queries/users";
import { selectDefaultStreamIds } from "../store/default-streams";
import { selectStreamByName, selectStreamForUpdate, updateStream, type StreamChanges, type StreamRow } from "../store/streams";
import { selectSubscriberIds } from "../store/subscriptions";
import { notifyStreamChanged, type StreamChangesDone } from "./channel-notices";
import { addDefaultStream, removeDefaultStream } from "./default-streams";
import { checkGroup, checkOwner, retentionDays } from "./subscriptions";

export interface StreamUpdate {
  description?: string;
  newName?: string;
  isPrivate?: boolean;
  isAnnouncementOnly?: boolean;
  isWebPublic?: boolean;
  historyPublicToSubscribers?: boolean;
  isDefaultStream?: boolean;
  streamPostPolicy?: number;
  messageRetentionDays?: string | number;
  canRemoveSubscribersGroup?: number | { new: number; old?: number };
}

/** One stream update event: [property, value, extra fields]. */
type Update = [string, string | number | boolean | null, Record<string, unknown>?];

/**
 * PATCH /streams/{stream_id} (Zulip's update_stream_backend): organization administrators only
 * (others learn nothing of a private channel they are not in); every check comes before any
 * change, then each change is written and announced in one transaction, in Zulip's order.
 */
export async function doUpdateStream(deps: AppDeps, who: Identity, streamId: number, req: StreamUpdate): Promise<void> {
  const viewer = viewerOf(who);
  const found = await findStream(deps.pool, viewer, streamId);
  if (!found || found.stream.deactivated) throw badRequest("Invalid channel ID");
  const { stream, sub } = found;
  if (!isAdminRole(who.role)) {
    if (stream.inviteOnly && !sub?.active) throw badRequest("Invalid channel ID");
    throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
  }
  const realm = await deps.accounts.getRealm(who.realmId);
  const isDefault = (await selectDefaultStreamIds(deps.pool, who.realmId)).has(stream.id);
  // Zulip's order: the combination asked for is judged before web-public access (again below, locked).
  proposedPrivacy(stream, req, isDefault);
  if (req.isWebPublic) await checkWebPublic(deps, who, realm);

  // The changes are judged against the channel as locked, not as read before: of two identical
  // renames (or privacy changes) at once, the second finds the first's result, as in a serial order.
  const done = await withTx(deps.pool, async (tx) => {
    const before = await selectStreamForUpdate(tx, who.realmId, stream.id);
    if (!before || before.deactivated) throw badRequest("Invalid channel ID");
    const { changes, updates, privacyChanged, postPolicy, newName } = await planUpdate(deps, who, realm, before, sub, isDefault, req);
    if (!(await updateStream(tx, who.realmId, stream.id, changes))) throw badRequest("Channel name already in use.");
    const after = (await selectStreamForUpdate(tx, who.realmId, stream.id))!;
    // Events name the channel as it was until the rename, which comes last; the changes before
    // the privacy change go to those who saw the channel before it (Zulip's order).
    const named = { ...after, name: before.name };
    const early = { ...named, inviteOnly: before.inviteOnly, isWebPublic: before.isWebPublic, historyPublicToSubscribers: before.historyPublicToSubscribers };
    for (const [property, value, extra] of updates) await notifyUpdate(tx, deps, early, property, value, extra);
    if (privacyChanged) await notifyPrivacy(tx, deps, early, named);
    if (req.isDefaultStream === true) await addDefaultStream(tx, deps, who.realmId, stream.id);
    if (req.isDefaultStream === false) await removeDefaultStream(tx, deps, who.realmId, stream.id);
    if (postPolicy !== undefined) {
      await notifyUpdate(tx, deps, named, "stream_post_policy", postPolicy);
      // Zulip still sends the legacy property for older clients.
      await notifyUpdate(tx, deps, named, "is_announcement_only", postPolicy === 2);
    }
    if (newName !== undefined) await notifyUpdate(tx, deps, named, "name", newName);
    return changesDone(realm, before, after, changes, privacyChanged, postPolicy);
  });
  if (Object.keys(done).length === 0) return;
  const actor = await getUser(deps, who.realmId, who.userId);
  if (actor) await notifyStreamChanged(deps, realm, actor, stream.id, done);
}

/** What a PATCH changes in `stream` (as locked), every check of Zulip's in its order. */
async function planUpdate(deps: AppDeps, who: Identity, realm: InternalRealm, stream: StreamRow, sub: { active: boolean } | null | undefined, isDefault: boolean, req: StreamUpdate) {
  const privacy = proposedPrivacy(stream, req, isDefault);
  const changes: StreamChanges = {};
  const updates: Update[] = [];
  if (req.description !== undefined) {
    changes.description = req.description.replace(/\n/g, " ");
    changes.renderedDescription = await renderChannelDescription(deps, viewerOf(who), changes.description);
    updates.push(["description", changes.description, { rendered_description: changes.renderedDescription }]);
  }
  if (req.messageRetentionDays !== undefined) {
    checkOwner(who.role);
    changes.messageRetentionDays = retentionDays(req.messageRetentionDays);
    updates.push(["message_retention_days", changes.messageRetentionDays]);
  }
  if (req.canRemoveSubscribersGroup !== undefined) {
    const change = typeof req.canRemoveSubscribersGroup === "number" ? { new: req.canRemoveSubscribersGroup } : req.canRemoveSubscribersGroup;
    if (change.old !== undefined && change.old !== stream.canRemoveSubscribersGroup) throw badRequest("'old' value does not match the expected value.");
    await checkGroup(deps, realm, change.new);
    changes.canRemoveSubscribersGroup = change.new;
    updates.push(["can_remove_subscribers_group", change.new]);
  }
  // Even an administrator must be subscribed to change whether a private channel is private.
  if (req.isPrivate !== undefined && stream.inviteOnly && !sub?.active) throw badRequest("Invalid channel ID");
  const privacyChanged =
    privacy.inviteOnly !== stream.inviteOnly || privacy.isWebPublic !== stream.isWebPublic || privacy.historyPublicToSubscribers !== stream.historyPublicToSubscribers;
  if (privacyChanged) Object.assign(changes, privacy);
  // The legacy is_announcement_only wins over stream_post_policy, as in Zulip.
  const postPolicy = req.isAnnouncementOnly !== undefined ? (req.isAnnouncementOnly ? 2 : 1) : req.streamPostPolicy;
  if (postPolicy !== undefined) changes.streamPostPolicy = postPolicy;
  const newName = req.newName === undefined ? undefined : await checkNewName(deps, stream, req.newName);
  if (newName !== undefined) changes.name = newName;
  return { changes, updates, privacyChanged, postPolicy, newName };
}

/** The changes the notification bot tells the channel of, old and new. */
function changesDone(realm: InternalRealm, before: StreamRow, after: StreamRow, changes: StreamChanges, privacyChanged: boolean, postPolicy: number | undefined): StreamChangesDone {
  // A channel that follows the organization counts with its value (null there: forever).
  const days = (value: number | null) => value ?? realm.settings.message_retention_days ?? -1;
  const done: StreamChangesDone = {};
  if (changes.description !== undefined) done.description = { old: before.description, new: after.description };
  if (changes.messageRetentionDays !== undefined) done.retention = { old: days(before.messageRetentionDays), new: days(after.messageRetentionDays) };
  if (privacyChanged) done.privacy = { old: before, new: after };
  if (postPolicy !== undefined) done.postPolicy = { old: before.streamPostPolicy, new: postPolicy };
  if (changes.name !== undefined) done.name = { old: before.name, new: after.name };
  return done;
}

/**
 * The privacy a request asks for, checked as Zulip does: history is protected by default when a
 * channel becomes private; web-public channels are public with shared history; public channels
 * have shared history; default channels are public.
 */
function proposedPrivacy(stream: StreamRow, req: StreamUpdate, isDefault: boolean) {
  const inviteOnly = req.isPrivate ?? stream.inviteOnly;
  const isWebPublic = req.isWebPublic ?? stream.isWebPublic;
  const historyPublicToSubscribers = req.historyPublicToSubscribers ?? (req.isPrivate !== undefined ? !req.isPrivate : stream.historyPublicToSubscribers);
  if (isWebPublic && !historyPublicToSubscribers) throw badRequest("Invalid parameters");
  if (isWebPublic && inviteOnly) throw badRequest("Invalid parameters");
  if (!inviteOnly && !historyPublicToSubscribers) throw badRequest("Invalid parameters");
  if (inviteOnly && (req.isDefaultStream ?? isDefault)) throw badRequest("A default channel cannot be private.");
  return { inviteOnly, isWebPublic, historyPublicToSubscribers };
}

async function checkWebPublic(deps: AppDeps, who: Identity, realm: InternalRealm): Promise<void> {
  if (!realm.settings.enable_spectator_access) throw badRequest("Web-public channels are not enabled.");
  const caller = await getUser(deps, who.realmId, who.userId);
  const s = realm.settings;
  if (!caller || !passesCommonPolicy(s.create_web_public_stream_policy, caller, s.waiting_period_threshold, deps.clock.now())) {
    throw badRequest("Insufficient permission");
  }
}

/** Zulip's rename checks: a different name, valid, and free unless only its case changes. */
async function checkNewName(deps: AppDeps, stream: StreamRow, raw: string): Promise<string> {
  const name = raw.trim();
  if (name === stream.name) throw badRequest("Channel already has that name!");
  if (name.toLowerCase() !== stream.name.toLowerCase()) {
    checkStreamName(name);
    if (await selectStreamByName(deps.pool, stream.realmId, name)) throw badRequest("Channel name already in use.");
  }
  return name;
}

/** A stream update to everyone who can see the channel now. */
async function notifyUpdate(tx: Queryable, deps: AppDeps, stream: StreamRow, property: string, value: Update[1], extra: Update[2] = {}): Promise<void> {
  const subscribers = (await selectSubscriberIds(tx, stream.realmId, [stream.id])).get(stream.id) ?? [];
  const users = await streamWatchers(deps, stream, subscribers);
  const event = { type: "stream", op: "update", stream_id: stream.id, name: stream.name, property, value, ...extra };
  await emitEvent(tx, {
    type: "messaging.stream.updated",
    realmId: stream.realmId,
    payload: MessagingStreamUpdated.parse({ stream_id: stream.id, client: { event, users } }),
  });
}

/**
 * A privacy change (Zulip's do_change_stream_permission): users who can see the channel only now
 * get a stream create and its subscribers (peer_add); users who no longer can get a stream delete;
 * the others an `invite_only` update carrying the whole privacy.
 */
async function notifyPrivacy(tx: Queryable, deps: AppDeps, before: StreamRow, after: StreamRow): Promise<void> {
  const realmId = after.realmId;
  const subscribers = (await selectSubscriberIds(tx, realmId, [after.id])).get(after.id) ?? [];
  const saw = new Set(await streamWatchers(deps, before, subscribers));
  const sees = await streamWatchers(deps, after, subscribers);
  const gained = sees.filter((id) => !saw.has(id));
  const lost = [...saw].filter((id) => !sees.includes(id)).sort((a, b) => a - b);
  const traffic = (await trafficFor(deps, realmId, [after])).get(after.id) ?? null;
  if (gained.length > 0) {
    const event = { type: "stream", op: "create", streams: [streamObject(after, traffic)] };
    await emitEvent(tx, { type: "messaging.stream.access_gained", realmId, payload: MessagingStreamAccessGained.parse({ stream_ids: [after.id], client: { event, users: gained } }) });
    if (subscribers.length > 0) {
      const peers = { type: "subscription", op: "peer_add", stream_ids: [after.id], user_ids: subscribers };
      await emitEvent(tx, { type: "messaging.subscription.peer_added", realmId, payload: MessagingSubscriptionPeerAdded.parse({ client: { event: peers, users: gained } }) });
    }
  }
  const stayed = sees.filter((id) => saw.has(id));
  if (stayed.length > 0) {
    const event = {
      type: "stream",
      op: "update",
      stream_id: after.id,
      name: after.name,
      property: "invite_only",
      value: after.inviteOnly,
      history_public_to_subscribers: after.historyPublicToSubscribers,
      is_web_public: after.isWebPublic,
    };
    await emitEvent(tx, { type: "messaging.stream.updated", realmId, payload: MessagingStreamUpdated.parse({ stream_id: after.id, client: { event, users: stayed } }) });
  }
  if (lost.length > 0) {
    const event = { type: "stream", op: "delete", streams: [streamObject(after, traffic)] };
    await emitEvent(tx, { type: "messaging.stream.access_lost", realmId, payload: MessagingStreamAccessLost.parse({ stream_ids: [after.id], client: { event, users: lost } }) });
  }
}
