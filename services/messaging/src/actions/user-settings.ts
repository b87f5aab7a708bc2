import type { Queryable } from "@chat/platform";
import { isReplicatedSetting, pickReplicated } from "../lib/user-settings";
import { deleteUserDrafts } from "../store/drafts";
import { fillUserSettings, setUserSetting } from "../store/user-settings";

/**
 * Applies a setting change announced by accounts (consumer). Turning drafts synchronization off
 * drops the server's copies of the user's drafts, without events: the clients keep theirs.
 */
export async function doReplicateUserSetting(tx: Queryable, realmId: number, userId: number, name: string, value: unknown): Promise<void> {
  if (!isReplicatedSetting(name)) return;
  await setUserSetting(tx, realmId, userId, name, value);
  if (name === "enable_drafts_synchronization" && value === false) await deleteUserDrafts(tx, realmId, userId);
}

/**
 * Stores settings learnt other than by a change event (read through from accounts for users the
 * replica did not fully know, a new user's initial ones) where the replica lacks them.
 */
export async function doFillUserSettings(db: Queryable, realmId: number, users: Array<{ user_id: number; settings: Record<string, unknown> }>): Promise<void> {
  for (const u of users) {
    const settings = pickReplicated(u.settings);
    if (Object.keys(settings).length > 0) await fillUserSettings(db, realmId, u.user_id, settings);
  }
}
