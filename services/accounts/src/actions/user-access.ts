import { INACCESSIBLE_USER_NAME } from "@chat/contracts";
import { emitEvent, withTx, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { userObject } from "../lib/format";
import { userViewFor } from "../queries/profile";
import { getUser, getUsersByIds } from "../store/users";

type AccessPairs = Array<{ user_id: number; user_ids: number[] }>;

/**
 * Messaging changed which users some guests access (channel subscriptions, in an organization
 * that limits guests). Each guest still active gets, one event per user as Zulip sends them, the
 * users they gained as `realm_user` / add, as that guest may see them (Zulip's
 * send_user_creation_events_on_adding_subscriptions), and the users they lost as `realm_user` /
 * remove under the stand-in's name (send_user_remove_events_on_removing_subscriptions).
 * Deactivated users are left out: Zulip counts only active subscribers there. Delivering twice
 * does no harm: clients apply both as upserts.
 */
export async function doNotifyUserAccessChanged(deps: AccountsDeps, realmId: number, change: { gained: AccessPairs; lost: AccessPairs }): Promise<void> {
  await withTx(deps.pool, async (tx) => {
    for (const { user_id: guestId, user_ids: userIds } of change.gained) {
      const guest = await getUser(tx, realmId, guestId);
      if (!guest?.isActive || userIds.length === 0) continue;
      const view = await userViewFor(tx, realmId, guest, { profileData: true });
      for (const u of await getUsersByIds(tx, realmId, userIds)) {
        if (!u.isActive) continue;
        const person = view(u, userObject(u, { clientGravatar: false }));
        await notifyGuest(tx, realmId, guestId, { type: "realm_user", op: "add", person });
      }
    }
    for (const { user_id: guestId, user_ids: userIds } of change.lost) {
      if (!(await getUser(tx, realmId, guestId))?.isActive) continue;
      for (const u of await getUsersByIds(tx, realmId, userIds)) {
        if (!u.isActive) continue;
        await notifyGuest(tx, realmId, guestId, { type: "realm_user", op: "remove", person: { user_id: u.id, full_name: INACCESSIBLE_USER_NAME } });
      }
    }
  });
}

async function notifyGuest(tx: Queryable, realmId: number, guestId: number, event: Record<string, unknown> & { type: string }): Promise<void> {
  await emitEvent(tx, { type: "accounts.user_access.changed", realmId, payload: { user_id: guestId, client: { event, users: [guestId] } } });
}
