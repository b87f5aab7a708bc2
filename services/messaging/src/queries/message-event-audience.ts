import type { Queryable } from "@chat/platform";
import type { MessageRow } from "../store/messages";
import { selectStreamById } from "../store/streams";
import { selectSubscriberIds } from "../store/subscriptions";
import { selectMessageUserIds } from "../store/usermessages";

/**
 * Who hears of an action on a message (a reaction): Zulip's
 * event_recipient_ids_for_action_on_messages, which follows who may still read it. A direct
 * message: the users who have it. A channel message: in a public channel, those who have it and
 * the current subscribers (who read it through the history); in a private channel with shared
 * history, the current subscribers; with protected history, those who have it and are still
 * subscribed.
 */
export async function messageActionAudience(db: Queryable, message: MessageRow): Promise<number[]> {
  const holders = await selectMessageUserIds(db, message.realmId, message.id);
  if (message.streamId === null) return holders;
  const stream = await selectStreamById(db, message.realmId, message.streamId);
  if (!stream) return holders;
  const subscribers = (await selectSubscriberIds(db, message.realmId, [stream.id])).get(stream.id) ?? [];
  let users: number[];
  if (!stream.historyPublicToSubscribers) {
    const subscribed = new Set(subscribers);
    users = holders.filter((id) => subscribed.has(id));
  } else if (stream.inviteOnly) {
    users = subscribers;
  } else {
    users = [...new Set([...holders, ...subscribers])];
  }
  return users.sort((a, b) => a - b);
}
