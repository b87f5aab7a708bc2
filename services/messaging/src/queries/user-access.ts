import type { InternalRealm } from "@chat/contracts";
import { badRequest, type Queryable } from "@chat/platform";
import { isGuestRole } from "../lib/permissions";
import { selectConversationPartners, selectGuestIds } from "../store/user-access";
import type { UserRow } from "../store/users";

/**
 * Limited user access (Zulip's can_access_all_users_group, kept by accounts): in an organization
 * that sets it to role:members, a guest accesses only the users who share an active channel
 * subscription or a direct message conversation with them, bots, and themselves.
 */

/** Whether the organization limits its guests' access to users. */
export function limitsGuests(realm: Pick<InternalRealm, "settings">): boolean {
  return (realm.settings.can_access_all_users_group ?? "role:everyone") !== "role:everyone";
}

/** The users who share a channel or a conversation with the user (accounts' question). */
export async function getConversationPartners(db: Queryable, realmId: number, userId: number): Promise<number[]> {
  const partners = (await selectConversationPartners(db, realmId, [userId])).get(userId)!;
  return [...partners].sort((a, b) => a - b);
}

/**
 * Which of `users` the viewer does not access: none unless the viewer is a guest of an
 * organization that limits guests; bots and the viewer are always accessible.
 */
export async function inaccessibleUsers(db: Queryable, realm: InternalRealm, viewer: { userId: number; role: number }, users: Iterable<UserRow>): Promise<Set<number>> {
  const denied = new Set<number>();
  if (!isGuestRole(viewer.role) || !limitsGuests(realm)) return denied;
  const candidates = [...users].filter((u) => !u.isBot && u.id !== viewer.userId);
  if (candidates.length === 0) return denied;
  const partners = (await selectConversationPartners(db, realm.id, [viewer.userId])).get(viewer.userId)!;
  for (const u of candidates) if (!partners.has(u.id)) denied.add(u.id);
  return denied;
}

/**
 * A guest of an organization that limits guests may not write (a direct message, a typing
 * notification) to a user they do not access (Zulip 8.0's refusal); the users a conversation of
 * theirs already includes, bots and themselves they access. Elsewhere this reads nothing.
 */
export async function checkCanAccessRecipients(db: Queryable, realm: InternalRealm, sender: Pick<UserRow, "id" | "role">, recipients: Iterable<UserRow>): Promise<void> {
  const denied = await inaccessibleUsers(db, realm, { userId: sender.id, role: sender.role }, recipients);
  if (denied.size > 0) throw badRequest("You do not have permission to access some of the recipients.");
}

/**
 * The guests among `recipientIds` who do not access `sender`: of a channel message's recipients
 * (someone who posts to a channel without being subscribed to it), their copy of the message
 * hides the sender; of a typing notification's, they are not told. A direct message's recipients
 * share its conversation with the sender, so they all access them once it is sent.
 */
export async function guestsNotAccessingSender(db: Queryable, realm: InternalRealm, sender: UserRow, recipientIds: number[]): Promise<Set<number>> {
  if (sender.isBot || !limitsGuests(realm)) return new Set();
  const guests = (await selectGuestIds(db, realm.id, recipientIds)).filter((id) => id !== sender.id);
  if (guests.length === 0) return new Set();
  const partners = (await selectConversationPartners(db, realm.id, [sender.id])).get(sender.id)!;
  return new Set(guests.filter((id) => !partners.has(id)));
}

/**
 * For each guest among `receiverIds` who does not access some of `participants` (a direct
 * conversation's, before its first message), those participants; receivers who access them all
 * are absent. Bots and the receiver themselves are always accessible.
 */
export async function participantsUnseenByGuests(db: Queryable, realm: InternalRealm, receiverIds: number[], participants: UserRow[]): Promise<Map<number, Set<number>>> {
  const out = new Map<number, Set<number>>();
  const humans = participants.filter((u) => !u.isBot);
  if (!limitsGuests(realm) || humans.length < 2) return out;
  const guests = await selectGuestIds(db, realm.id, receiverIds);
  if (guests.length === 0) return out;
  const partners = await selectConversationPartners(db, realm.id, guests);
  for (const guest of guests) {
    const unseen = humans.filter((u) => u.id !== guest && !partners.get(guest)!.has(u.id)).map((u) => u.id);
    if (unseen.length > 0) out.set(guest, new Set(unseen));
  }
  return out;
}
