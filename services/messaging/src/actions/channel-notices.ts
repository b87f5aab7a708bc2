import type { InternalRealm } from "@chat/contracts";
import type { AppDeps } from "../deps";
import {
  channelCreatedNotice,
  CHANNEL_EVENTS_TOPIC,
  descriptionChangedNotice,
  newChannelsAnnouncement,
  NEW_CHANNELS_TOPIC,
  permissionChangedNotice,
  permissionPolicyName,
  postPolicyChangedNotice,
  renamedNotice,
  retentionChangedNotice,
  subscribedYouNotice,
} from "../lib/channel-notices";
import type { StreamRow } from "../store/streams";
import type { UserRow } from "../store/users";
import { sendAsNotificationBot, type BotMessage } from "./notification-bot";

export interface SubscriptionsDone {
  actor: UserRow;
  /** Everyone the request subscribed or found subscribed. */
  targets: UserRow[];
  /** The channels the request created, in the order created. */
  created: StreamRow[];
  /** Every channel of the request, by id. */
  streams: StreamRow[];
  /** Channel id -> users newly subscribed to it. */
  added: Map<number, number[]>;
  announce: boolean;
}

/**
 * The notification bot's messages after POST /users/me/subscriptions, in Zulip's order (its
 * send_messages_for_new_subscribers): to each human the actor subscribed, the channels other
 * than new ones; with `announce`, the new channels in the organization's announcement channel;
 * then each new channel's first message in its "channel events" topic. What tells of the
 * actor's own action starts read for them.
 */
export async function notifySubscriptionsDone(deps: AppDeps, realm: InternalRealm, done: SubscriptionsDone): Promise<void> {
  const { actor, created } = done;
  const messages: BotMessage[] = [];
  const isNew = new Set(created.map((s) => s.id));
  for (const user of done.targets) {
    if (user.id === actor.id || user.isBot) continue;
    const names = done.streams.filter((s) => !isNew.has(s.id) && done.added.get(s.id)?.includes(user.id)).map((s) => s.name);
    if (names.length > 0) messages.push({ userId: user.id, content: subscribedYouNotice(actor, names) });
  }
  const readFor = new Set([actor.id]);
  const announcements = realm.settings.new_stream_announcements_stream_id;
  if (done.announce && created.length > 0 && announcements != null && announcements !== -1) {
    const content = newChannelsAnnouncement(actor, created.map((s) => s.name));
    messages.push({ streamId: announcements, topic: NEW_CHANNELS_TOPIC, content, readFor });
  }
  for (const stream of created) messages.push({ streamId: stream.id, topic: CHANNEL_EVENTS_TOPIC, content: channelCreatedNotice(actor, stream), readFor });
  await sendAsNotificationBot(deps, realm, messages, "a subscription notice");
}

/** What PATCH /streams/{id} changed that Zulip tells the channel of, each old and new. */
export interface StreamChangesDone {
  description?: { old: string; new: string };
  /** Days or -1 (forever), the organization's value for a channel that follows it. */
  retention?: { old: number; new: number };
  privacy?: { old: StreamRow; new: StreamRow };
  postPolicy?: { old: number; new: number };
  name?: { old: string; new: string };
}

/** The notices of a channel's changed settings in its "channel events" topic, in Zulip's order. */
export async function notifyStreamChanged(deps: AppDeps, realm: InternalRealm, actor: UserRow, streamId: number, changes: StreamChangesDone): Promise<void> {
  const notices: string[] = [];
  const { description, retention, privacy, postPolicy, name } = changes;
  if (description) notices.push(descriptionChangedNotice(actor, description.old, description.new));
  if (retention) notices.push(retentionChangedNotice(actor, retention.old, retention.new));
  if (privacy) notices.push(permissionChangedNotice(actor, permissionPolicyName(privacy.old), permissionPolicyName(privacy.new)));
  if (postPolicy) notices.push(postPolicyChangedNotice(actor, postPolicy.old, postPolicy.new));
  if (name) notices.push(renamedNotice(actor, name.old, name.new));
  const messages = notices.map((content) => ({ streamId, topic: CHANNEL_EVENTS_TOPIC, content }));
  await sendAsNotificationBot(deps, realm, messages, "a channel settings notice");
}
