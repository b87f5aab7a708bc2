import type { StreamObject } from "@chat/contracts";
import type { Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { isGuestRole } from "../lib/permissions";
import { selectDefaultStreamIds } from "../store/default-streams";
import { selectStreamsByIds } from "../store/streams";
import { byStreamName, toStreamObjects, type Viewer } from "./streams";

/** The organization's default channels as channel objects, in name order. */
export async function defaultStreamObjects(deps: AppDeps, db: Queryable, realmId: number): Promise<StreamObject[]> {
  const ids = await selectDefaultStreamIds(db, realmId);
  const streams = (await selectStreamsByIds(db, realmId, [...ids])).filter((s) => !s.deactivated);
  return (await toStreamObjects(deps, realmId, streams)).sort(byStreamName);
}

/** Register's `realm_default_streams`: empty for guests, as Zulip gives them. */
export async function getDefaultStreams(deps: AppDeps, viewer: Viewer): Promise<StreamObject[]> {
  return isGuestRole(viewer.role) ? [] : defaultStreamObjects(deps, deps.pool, viewer.realmId);
}
