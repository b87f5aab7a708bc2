import type { DraftObject } from "@chat/contracts";
import type { Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { draftObject } from "../actions/drafts";
import { selectDrafts } from "../store/drafts";
import { checkDraftsSynchronization, getDraftsSynchronization } from "./user-settings";

/** GET /drafts: ascending by last edit. */
export async function getDrafts(deps: AppDeps, who: Identity): Promise<{ count: number; drafts: DraftObject[] }> {
  await checkDraftsSynchronization(deps, who);
  const drafts = (await selectDrafts(deps.pool, who.realmId, who.userId, "asc")).map(draftObject);
  return { count: drafts.length, drafts };
}

/**
 * Register's `drafts`: newest edits first, at most 1000; none while synchronization is off (Zulip
 * deletes them when it is turned off; here that happens a moment later, when the change reaches
 * messaging, and a register in between must not show them).
 */
export async function getRegisterDrafts(deps: AppDeps, who: Identity): Promise<DraftObject[]> {
  const [on, rows] = await Promise.all([getDraftsSynchronization(deps, who), selectDrafts(deps.pool, who.realmId, who.userId, "desc", 1000)]);
  return on ? rows.map(draftObject) : [];
}
