import { badRequest, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { doFillUserSettings } from "../actions/user-settings";
import { hasAllSettings, pickReplicated, settingsView, type UserSettingsView } from "../lib/user-settings";
import { selectUserSettings, type StoredUserSettings } from "../store/user-settings";

/**
 * The settings messaging honours for some users of a realm, from the replica; users it does not
 * fully know yet are read through from accounts (new users start with the organization's
 * defaults, which no settings event announces). Users accounts does not know get Zulip's defaults.
 */
export async function getUserSettings(
  deps: AppDeps,
  realmId: number,
  userIds: number[],
  /** Settings already read from the replica (a send's context): not read again when complete. */
  known?: Map<number, StoredUserSettings>,
): Promise<Map<number, UserSettingsView>> {
  const wanted = [...new Set(userIds)];
  const stored = new Map<number, StoredUserSettings>();
  for (const id of wanted) if (hasAllSettings(known?.get(id))) stored.set(id, known!.get(id)!);
  const unread = wanted.filter((id) => !stored.has(id));
  if (unread.length > 0) for (const [id, s] of await selectUserSettings(deps.pool, realmId, unread)) stored.set(id, s);
  const missing = wanted.filter((id) => !hasAllSettings(stored.get(id)));
  if (missing.length > 0) {
    const fetched = await deps.accounts.getUserSettings(realmId, missing);
    if (fetched.length > 0) {
      await doFillUserSettings(deps.pool, realmId, fetched);
      for (const [id, s] of await selectUserSettings(deps.pool, realmId, fetched.map((u) => u.user_id))) stored.set(id, s);
    }
  }
  return new Map(wanted.map((id) => [id, settingsView(stored.get(id))]));
}

/**
 * Whether the user keeps drafts on the server. Accounts' own value decides, not the replica: a
 * client that has just switched it is answered by what it set (the replica learns it a moment
 * later, and drops the drafts then). The replica stands in while accounts cannot be asked.
 */
export async function getDraftsSynchronization(deps: AppDeps, who: Identity): Promise<boolean> {
  let settings: UserSettingsView;
  try {
    const [own] = await deps.accounts.getUserSettings(who.realmId, [who.userId]);
    settings = settingsView(own ? pickReplicated(own.settings) : undefined);
  } catch {
    settings = (await getUserSettings(deps, who.realmId, [who.userId])).get(who.userId)!;
  }
  return settings.enableDraftsSynchronization;
}

/** Every drafts endpoint refuses users who turned drafts synchronization off (Zulip's draft_endpoint). */
export async function checkDraftsSynchronization(deps: AppDeps, who: Identity): Promise<void> {
  if (!(await getDraftsSynchronization(deps, who))) throw badRequest("User has disabled synchronizing drafts.");
}
