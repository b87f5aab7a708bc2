import type { AppDeps } from "../deps";
import { isAdminRole, isGuestRole } from "../lib/permissions";
import type { StreamRow } from "../store/streams";
import { getActiveRealmUsers } from "./users";

/**
 * Who may see a channel's metadata and subscriber list, besides its subscribers: for a public
 * channel every active non-guest user; for a private one the organization's administrators.
 */
export async function streamWatchers(deps: AppDeps, stream: StreamRow, subscriberIds: number[]): Promise<number[]> {
  const users = await getActiveRealmUsers(deps, stream.realmId);
  const ids = new Set(subscriberIds);
  for (const u of users) {
    if (stream.inviteOnly ? isAdminRole(u.role) : !isGuestRole(u.role) || stream.isWebPublic) ids.add(u.id);
  }
  return [...ids].sort((a, b) => a - b);
}
