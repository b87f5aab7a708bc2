import { MessagingUserAccessChanged, type InternalRealm } from "@chat/contracts";
import { emitEvent, type Queryable } from "@chat/platform";
import { limitsGuests } from "../queries/user-access";
import { selectSubscriberIds } from "../store/subscriptions";
import { selectConversationPartners, selectGuestIds } from "../store/user-access";
import { selectUsersByIds } from "../store/users";

/** Whom the guests a subscription change may concern accessed before it. */
export interface AccessBefore {
  realmId: number;
  partners: Map<number, Set<number>>;
}

/**
 * Before subscriptions of `userIds` to `streamIds` change, in an organization that limits guests:
 * what each guest among those users and the channels' subscribers accesses (null: nothing to
 * compare, no limit or no such guest). Read in the changing transaction.
 */
export async function accessBeforeInTx(tx: Queryable, realm: InternalRealm, userIds: number[], streamIds: number[]): Promise<AccessBefore | null> {
  if (!limitsGuests(realm)) return null;
  const subscribers = await selectSubscriberIds(tx, realm.id, streamIds);
  const guests = await selectGuestIds(tx, realm.id, [...new Set([...userIds, ...[...subscribers.values()].flat()])]);
  if (guests.length === 0) return null;
  return { realmId: realm.id, partners: await selectConversationPartners(tx, realm.id, guests) };
}

/**
 * After the change: the users each of those guests gained or lost access to (bots are always
 * accessible), for accounts to tell them with `realm_user` add and remove events (Zulip's
 * send_user_creation_events_on_adding_subscriptions and send_user_remove_events_on_removing_subscriptions).
 */
export async function notifyAccessChangedInTx(tx: Queryable, before: AccessBefore | null): Promise<void> {
  if (!before) return;
  const after = await selectConversationPartners(tx, before.realmId, [...before.partners.keys()]);
  const changes: Array<{ guest: number; gained: number[]; lost: number[] }> = [];
  for (const [guest, had] of before.partners) {
    const has = after.get(guest)!;
    const gained = [...has].filter((id) => !had.has(id) && id !== guest);
    const lost = [...had].filter((id) => !has.has(id) && id !== guest);
    if (gained.length || lost.length) changes.push({ guest, gained, lost });
  }
  if (changes.length === 0) return;
  const changed = [...new Set(changes.flatMap((c) => [...c.gained, ...c.lost]))];
  const bots = new Set((await selectUsersByIds(tx, before.realmId, changed)).filter((u) => u.isBot).map((u) => u.id));
  const pairs = (pick: (c: (typeof changes)[number]) => number[]) =>
    changes
      .map((c) => ({ user_id: c.guest, user_ids: pick(c).filter((id) => !bots.has(id)).sort((a, b) => a - b) }))
      .filter((p) => p.user_ids.length > 0);
  const gained = pairs((c) => c.gained);
  const lost = pairs((c) => c.lost);
  if (gained.length === 0 && lost.length === 0) return;
  await emitEvent(tx, { type: "messaging.user_access.changed", realmId: before.realmId, payload: MessagingUserAccessChanged.parse({ gained, lost }) });
}
