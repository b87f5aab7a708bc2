import type { MutedUser } from "@chat/contracts";
import type { Queryable } from "@chat/platform";
import { listMutes } from "../store/muted-users";

/** Register's `muted_users`: who the user muted and when (Unix seconds), oldest first. */
export async function getMutedUsers(db: Queryable, realmId: number, userId: number): Promise<MutedUser[]> {
  return (await listMutes(db, realmId, userId)).map((m) => ({ id: m.mutedUserId, timestamp: Math.floor(m.dateMuted.getTime() / 1000) }));
}
