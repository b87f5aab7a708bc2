import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { getMutedUsers } from "../queries/muted-users";
import { deleteMute, hasMute, insertMute, lockMutesOwner, nextMutedUsersVersion } from "../store/muted-users";
import { getUser } from "../store/users";
import { checkCanAccessUser } from "../queries/user-access";

/**
 * Zulip's access_user_by_id as its mute views call it (allow_bots and allow_deactivated, not
 * for_admin): any user of the caller's organization, bots and deactivated users included (bots
 * since feature level 188); another organization's user, or a system bot (which Zulip keeps in
 * its own realm), is "No such user", and so is a user that a guest the organization limits does
 * not access.
 */
async function accessMutableUser(tx: Queryable, deps: AccountsDeps, who: Identity, userId: number): Promise<void> {
  const user = await getUser(tx, who.realmId, userId);
  if (!user || user.isSystemBot) throw badRequest("No such user");
  await checkCanAccessUser(deps, who, user, "No such user");
}

/**
 * Runs one change of the caller's mute list, then sends the whole new list: to the user's own
 * clients (`muted_users`) and to messaging's replica (versioned, so it never goes back to an
 * older list).
 */
async function changeMutes(deps: AccountsDeps, who: Identity, change: (tx: Queryable) => Promise<void>): Promise<void> {
  await withTx(deps.pool, async (tx) => {
    if (!(await lockMutesOwner(tx, who.realmId, who.userId))) throw badRequest("No such user");
    await change(tx);
    const mutedUsers = await getMutedUsers(tx, who.realmId, who.userId);
    await emitEvent(tx, {
      type: "accounts.muted_users.changed",
      realmId: who.realmId,
      payload: {
        user_id: who.userId,
        muted_users: mutedUsers,
        version: await nextMutedUsersVersion(tx),
        client: { event: { type: "muted_users", muted_users: mutedUsers }, users: [who.userId] },
      },
    });
  });
}

/**
 * POST /users/me/muted_users/{id} (Zulip's mute_user view and do_mute_user). Messaging marks the
 * muted user's messages read for the caller when it learns of the change.
 */
export async function doMuteUser(deps: AccountsDeps, who: Identity, mutedUserId: number): Promise<void> {
  if (mutedUserId === who.userId) throw badRequest("Cannot mute self");
  await changeMutes(deps, who, async (tx) => {
    await accessMutableUser(tx, deps, who, mutedUserId);
    if (await hasMute(tx, who.realmId, who.userId, mutedUserId)) throw badRequest("User already muted");
    await insertMute(tx, who.realmId, who.userId, mutedUserId, deps.clock.now());
  });
}

/** DELETE /users/me/muted_users/{id} (Zulip's unmute_user view): messages stay as they are. */
export async function doUnmuteUser(deps: AccountsDeps, who: Identity, mutedUserId: number): Promise<void> {
  await changeMutes(deps, who, async (tx) => {
    await accessMutableUser(tx, deps, who, mutedUserId);
    if (!(await deleteMute(tx, who.realmId, who.userId, mutedUserId))) throw badRequest("User is not muted");
  });
}
