/**
 * The notification bot's messages about channels, worded as Zulip 9 (feature level 267) words
 * them (zerver/actions/streams.py; Realm.STREAM_EVENTS_NOTIFICATION_TOPIC_NAME, the
 * Stream.PERMISSION_POLICIES and POST_POLICIES names). Written from memory of Zulip's source.
 */
import { silentMention } from "./message-edit";

/** The topic where a channel's own events are told (Zulip 9: "channel events"). */
export const CHANNEL_EVENTS_TOPIC = "channel events";
/** The announcement channel's topic for new channels. */
export const NEW_CHANNELS_TOPIC = "new channels";

interface Actor {
  id: number;
  fullName: string;
}

/** `#**name**`, a channel link. */
const channelLink = (name: string) => `#**${name}**`;

const NO_DESCRIPTION = "*No description.*";
const quoted = (text: string) => `\n\`\`\`\` quote\n${text}\n\`\`\`\``;

/**
 * The direct message to a user whom someone else subscribed (you_were_just_subscribed_message):
 * the acting user is mentioned (not silently), the channels sorted by name.
 */
export function subscribedYouNotice(actor: Actor, channelNames: string[]): string {
  const names = [...channelNames].sort();
  const user = `@**${actor.fullName}|${actor.id}**`;
  if (names.length === 1) return `${user} subscribed you to the channel ${channelLink(names[0])}.`;
  return `${user} subscribed you to the following channels:\n\n${names.map((n) => `* ${channelLink(n)}\n`).join("")}`;
}

/** Zulip's name of a channel's access policy (get_stream_permission_policy_name). */
export function permissionPolicyName(stream: { inviteOnly: boolean; historyPublicToSubscribers: boolean; isWebPublic: boolean }): string {
  if (stream.isWebPublic) return "Web-public";
  if (!stream.inviteOnly) return stream.historyPublicToSubscribers ? "Public" : "Public, protected history";
  return stream.historyPublicToSubscribers ? "Private, shared history" : "Private, protected history";
}

/** The first message of a new channel, in its "channel events" topic. */
export function channelCreatedNotice(
  actor: Actor,
  stream: { description: string; inviteOnly: boolean; historyPublicToSubscribers: boolean; isWebPublic: boolean },
): string {
  const description = stream.description === "" ? NO_DESCRIPTION : stream.description;
  return `**${permissionPolicyName(stream)}** channel created by ${silentMention(actor)}. **Description:**` + quoted(description);
}

/** The announcement of new channels (POST /users/me/subscriptions with announce=true). */
export function newChannelsAnnouncement(actor: Actor, channelNames: string[]): string {
  const links = channelNames.map(channelLink).join(", ");
  if (channelNames.length > 1) return `${silentMention(actor)} created the following channels: ${links}.`;
  return `${silentMention(actor)} created a new channel ${links}.`;
}

export function renamedNotice(actor: Actor, oldName: string, newName: string): string {
  return `${silentMention(actor)} renamed channel **${oldName}** to **${newName}**.`;
}

export function descriptionChangedNotice(actor: Actor, oldDescription: string, newDescription: string): string {
  return (
    `${silentMention(actor)} changed the description for this channel.\n\n` +
    `* **Old description:**${quoted(oldDescription || NO_DESCRIPTION)}\n` +
    `* **New description:**${quoted(newDescription || NO_DESCRIPTION)}`
  );
}

export function permissionChangedNotice(actor: Actor, oldPolicy: string, newPolicy: string): string {
  return (
    `${silentMention(actor)} changed the [access permissions](/help/channel-permissions) ` +
    `for this channel from **${oldPolicy}** to **${newPolicy}**.`
  );
}

/** Zulip's Stream.POST_POLICIES, by stream_post_policy. */
const POST_POLICY_NAMES: Record<number, string> = {
  1: "All channel members can post",
  2: "Only organization administrators can post",
  3: "Only organization full members can post",
  4: "Only organization administrators and moderators can post",
};

export function postPolicyChangedNotice(actor: Actor, oldPolicy: number, newPolicy: number): string {
  return (
    `${silentMention(actor)} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n` +
    `* **Old**: ${POST_POLICY_NAMES[oldPolicy] ?? oldPolicy}\n` +
    `* **New**: ${POST_POLICY_NAMES[newPolicy] ?? newPolicy}\n`
  );
}

/**
 * A retention change. Values are days or -1 (forever); a channel that follows the organization
 * (null) counts with the organization's value, as Zulip's notice does.
 */
export function retentionChangedNotice(actor: Actor, oldDays: number, newDays: number): string {
  const period = (days: number) => (days === -1 ? "Forever" : `${days} days`);
  const summary =
    newDays === -1
      ? "Messages in this channel will now be retained forever."
      : `Messages in this channel will now be automatically deleted ${newDays} days after they are sent.`;
  return (
    `${silentMention(actor)} has changed the [message retention period](/help/message-retention-policy) for this channel:\n` +
    `* **Old retention period**: ${period(oldDays)}\n` +
    `* **New retention period**: ${period(newDays)}\n\n` +
    summary
  );
}
