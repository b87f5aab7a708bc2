import { z } from "zod";
import { defineEvent } from "./index";
import { MessageClientEvent, noticeOf } from "./messages";

/**
 * Limited user access (the organization's can_access_all_users_group set to role:members): a
 * guest accesses only the users who share a channel subscription or a direct message
 * conversation with them, bots, and themselves. The name Zulip shows instead of an inaccessible
 * user's (its "Unknown user" stand-ins).
 */
export const INACCESSIBLE_USER_NAME = "Unknown user";

/** The stand-in's email: the user's dummy address (`user{id}@<organization>.invalid`, as a hidden email's). */
export function inaccessibleUserEmail(userId: number, realmStringId: string): string {
  return `user${userId}@${realmStringId}.invalid`;
}

/**
 * Client event `realm_user` / remove: a guest lost access to the user (feature level 228). The
 * name is the stand-in's, so that an inaccessible user's name never reaches the guest.
 */
export const RealmUserRemoveEvent = z.strictObject({
  type: z.literal("realm_user"),
  op: z.literal("remove"),
  person: z.strictObject({ user_id: z.number().int(), full_name: z.string() }),
});

/** Pairs of a guest and the users they gained or lost access to. */
const AccessPairs = z.array(z.strictObject({ user_id: z.number().int(), user_ids: z.array(z.number().int()) }));

/**
 * Channel subscriptions changed which users some guests can access (an organization limiting
 * guests only). Accounts, which owns user objects, tells each guest with `realm_user` add or
 * remove events.
 */
export const MessagingUserAccessChanged = defineEvent(
  "messaging.user_access.changed",
  z.object({ gained: AccessPairs, lost: AccessPairs }).passthrough(),
);

/**
 * A message's event for the guests among its recipients who cannot access its sender (a channel
 * message by someone not subscribed): the sender's name, email and avatar are the "Unknown user"
 * stand-in's. The others get it with `messaging.message.sent`.
 */
export const MessagingMessageSenderHidden = defineEvent(
  "messaging.message.sender_hidden",
  z.object({ message_id: z.number().int(), client: noticeOf(MessageClientEvent) }),
);

/** Accounts' realm_user add or remove for a guest whose access to users changed. */
export const AccountsUserAccessChanged = defineEvent("accounts.user_access.changed", z.object({ user_id: z.number().int() }).passthrough());
