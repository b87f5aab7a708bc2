import type { InternalRealm } from "@chat/contracts";
import type { Identity, Role } from "@chat/platform";
import type { AppDeps } from "../deps";
import { getUser } from "../queries/users";
import { doSendMessage, type SendRequest } from "./messages";

/** A message of the organization's notification bot: to a channel's topic, or to one user. */
export type BotMessage =
  | {
      streamId: number;
      topic: string;
      content: string;
      /** Only these recipients get it unread (Zulip's limit_unread_user_ids). */
      unreadOnlyFor?: Set<number>;
      /** These recipients get it already read (Zulip's mark_as_read: the user whose action it tells). */
      readFor?: Set<number>;
    }
  | { userId: number; content: string };

/**
 * Sends the messages, in order, as the organization's notification bot through the ordinary
 * send (events, flags, outbox), once the change they tell of has committed. A failure is logged
 * and the change stands, as in Zulip; the others are still sent.
 */
export async function sendAsNotificationBot(deps: AppDeps, realm: InternalRealm, messages: BotMessage[], what: string): Promise<void> {
  if (messages.length === 0) return;
  const bot = await getUser(deps, realm.id, realm.notification_bot_id);
  if (!bot) return;
  const as: Identity = { userId: bot.id, realmId: realm.id, role: bot.role as Role, isBot: true, email: bot.email, client: "Internal" };
  for (const m of messages) {
    const req: SendRequest =
      "userId" in m
        ? { type: "private", to: JSON.stringify([m.userId]), content: m.content, asNotificationBot: true }
        : { type: "stream", to: String(m.streamId), topic: m.topic, content: m.content, asNotificationBot: true, unreadOnlyFor: m.unreadOnlyFor, readFor: m.readFor };
    try {
      await doSendMessage(deps, as, req);
    } catch (err) {
      const to = "userId" in m ? { userId: m.userId } : { streamId: m.streamId };
      deps.log.warn({ err: (err as Error).message, ...to }, `could not send ${what}`);
    }
  }
}
